// `callctl calls show` for people: the call's fields, its metadata as JSON values (so null, "-" and "42" stay
// apart), the runtime's result (outcome, summary, data as given, the transcript as a conversation, links), the calling
// rules' part (call-compliance-output.ts), the status timeline, and every webhook delivery with each attempt (time,
// status, latency, error).
import type { CallResultData, TranscriptEntry } from '../../schemas/agent-runtime.js';
import { memberText, objectEntries, RawJson } from '../domain/raw-json.js';
import type { Storage } from '../storage/index.js';
import { complianceLines } from './call-compliance-output.js';
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

/**
 * `calls show` with the runtime's result as published (its JSON text, so that its data keeps the runtime's key order
 * in --json) and whether the terminal event carried it; null for both when the runtime reported none.
 */
export async function withResult<T extends { call: { call_id: string } }>(storage: Storage, shown: T) {
  const stored = await storage.history.findCallResult(shown.call.call_id);
  return {
    ...shown,
    call: { ...shown.call, result: stored ? new RawJson(stored.body) : null, result_in_event: stored?.inEvent ?? null },
  };
}

/**
 * A runtime's text as a terminal may show it: control characters and bidirectional overrides written as escapes, so
 * that nothing a callee said (or a runtime sent) moves the cursor, colours the terminal or reverses the line.
 */
export function terminalSafe(text: string): string {
  return text.replace(
    /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** m:ss from the first line of the transcript. */
function offset(start: number, at: string): string {
  const seconds = Math.max(0, Math.round((Date.parse(at) - start) / 1000));
  return Number.isFinite(seconds) ? `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}` : '?';
}

/** The result's lines: its outcome, summary, data as given, the conversation and links; "(none)" when none. */
function resultLines(result: unknown, inEvent: unknown): string[] {
  if (!(result instanceof RawJson)) return ['result: (none reported by the runtime)'];
  let published: Partial<CallResultData>;
  try {
    published = JSON.parse(result.text) as Partial<CallResultData>;
  } catch {
    return ['result: (unreadable)'];
  }
  const text = (value: unknown) => (typeof value === 'string' ? terminalSafe(value) : '-');
  const lines = [
    `result (from the agent's runtime, received ${text(published.received_at)}${inEvent === false ? ', after the terminal event was sent' : ''}):`,
    `  outcome: ${text(published.outcome)}`,
    `  opt out: ${published.opt_out === true ? 'yes (asked not to be called again)' : 'no'}`,
  ];
  const summary = typeof published.summary === 'string' ? published.summary.split(/\r?\n/) : null;
  lines.push(...(summary ? ['  summary:', ...summary.map((l) => `    ${terminalSafe(l)}`)] : ['  summary: -']));
  const data = memberText(result.text, 'data');
  lines.push(
    ...(data && data !== 'null'
      ? metadataLines(new RawJson(data)).map((l) => `  ${terminalSafe(l.replace(/^metadata/, 'data'))}`)
      : ['  data: -']),
  );
  // A row edited by hand may hold anything: only entries that are objects are lines.
  const transcript = (Array.isArray(published.transcript) ? (published.transcript as unknown[]) : []).filter(
    (e): e is TranscriptEntry => typeof e === 'object' && e !== null,
  );
  const start = transcript.length ? Date.parse(transcript[0]!.at) : 0;
  lines.push(
    ...(transcript.length
      ? [
          '  transcript:',
          ...transcript.map(
            (e) => `    [${offset(start, e.at)}] ${e.speaker === 'agent' ? 'agent' : 'callee'}: ${text(e.text)}`,
          ),
        ]
      : ['  transcript: -']),
    `  transcript url: ${text(published.transcript_url)}`,
    `  recording url: ${text(published.recording_url)}`,
  );
  return lines;
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
  const {
    metadata,
    events,
    deliveries,
    result,
    result_in_event: inEvent,
    recipient_region: region,
    consent,
    compliance,
    held_by: heldBy,
    ...fields
  } = call;
  const lines = block(
    Object.fromEntries(
      Object.entries(fields).map(([key, value]) => [key, key === 'name' || key === 'email' ? given(value) : value]),
    ),
    '',
  );
  lines.push(...metadataLines(metadata));
  lines.push(...resultLines(result, inEvent));
  lines.push(...complianceLines(region, consent, compliance, heldBy, terminalSafe));
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
