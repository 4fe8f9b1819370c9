// `callctl calls show` for people: the call's fields, its metadata as JSON values (so null, "-" and "42" stay
// apart), the status timeline, and every webhook delivery with each attempt (time, status, latency, error).
import { objectEntries, RawJson } from '../domain/raw-json.js';
import { block, cell, table } from './output.js';

type Row = Record<string, unknown>;

/** Values the caller gave: as JSON, so that a null, a string "-" and a number are told apart. */
const given = (value: unknown) => (value === undefined ? '-' : JSON.stringify(value));

/** Each member as the client wrote it, in their order (a JavaScript object would move "2" and "10" first). */
function metadataLines(metadata: unknown): string[] {
  if (!(metadata instanceof RawJson)) return [`metadata: ${given(metadata)}`];
  const entries = objectEntries(metadata.text);
  if (entries.length === 0) return ['metadata: {}'];
  const width = Math.max(...entries.map(([key]) => JSON.stringify(key).length + 1));
  return [
    'metadata (JSON, as given):',
    ...entries.map(([key, value]) => `  ${`${JSON.stringify(key)}:`.padEnd(width)} ${value}`),
  ];
}

function deliveryLines(delivery: Row): string[] {
  const attempts = (delivery.attempts ?? []) as Row[];
  const head = [
    `  ${cell(delivery.event_type)}`,
    cell(delivery.status),
    `webhook-id ${cell(delivery.id)}`,
    `${attempts.length} attempt${attempts.length === 1 ? '' : 's'}`,
    // Only a pending delivery has a next attempt.
    ...(delivery.next_attempt_at ? [`next attempt ${cell(delivery.next_attempt_at)}`] : []),
  ].join(', ');
  if (attempts.length === 0) return [head];
  const rows = attempts.map((a) => ({
    attempt: a.attempt,
    time: a.started_at,
    status: a.response_status,
    latency: typeof a.duration_ms === 'number' ? `${a.duration_ms} ms` : null,
    error: a.error,
  }));
  return [head, ...table(rows, undefined, '    ')];
}

export function formatCall(call: Row): string {
  const { metadata, events, deliveries, ...fields } = call;
  const lines = block(
    Object.fromEntries(
      Object.entries(fields).map(([key, value]) => [key, key === 'name' || key === 'email' ? given(value) : value]),
    ),
    '',
  );
  lines.push(...metadataLines(metadata));
  const timeline = ((events ?? []) as Row[]).map((e) => ({
    occurred_at: e.occurred_at,
    from: e.from_status,
    to: e.to_status,
    failure_reason: e.failure_reason,
    source: e.source,
  }));
  lines.push(...(timeline.length ? ['events:', ...table(timeline, undefined, '  ')] : ['events: (none)']));
  const sent = (deliveries ?? []) as Row[];
  lines.push(
    ...(sent.length ? ['webhook deliveries:', ...sent.flatMap(deliveryLines)] : ['webhook deliveries: (none)']),
  );
  lines.push('', '(- is none; name, email and metadata values are shown as JSON)');
  return `${lines.join('\n')}\n`;
}
