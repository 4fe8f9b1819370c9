// A call's detail view: its timeline from its events, and its metadata as given (key order kept, types told apart),
// re-indented without being re-parsed. Times and words come from format.ts.
import { CALL_STATUSES, type CallStatus } from '../../../schemas/vocabulary.js';
import { objectEntries } from '../../domain/raw-json.js';
import type { CallDetail } from '../../storage/index.js';
import type { ShownTimes } from '../format/shown-times.js';
import { formatDuration } from '../format/time.js';
import { REASON_WORDS, sourceWords } from '../format/status.js';

export interface TimelineEntry {
  at: string;
  what: string;
  detail: string;
}

/** A wait this long or longer before dialling is shown as a queue (shorter ones are the dispatcher's own pace). */
const QUEUE_SHOWN_MS = 2_000;

/**
 * The call's events in words, oldest first, their times as `times` writes them; a wait for the window or a slot
 * shows as a step of its own.
 */
export function timeline(call: CallDetail, now: Date, times: ShownTimes): TimelineEntry[] {
  const order = (s: CallStatus) => CALL_STATUSES.indexOf(s);
  const events = [...call.events].sort(
    (a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || order(a.toStatus) - order(b.toStatus),
  );
  const entries: TimelineEntry[] = [];
  const dialled = events.find((e) => e.toStatus === 'dialing');
  for (const event of events) {
    const by = sourceWords(event.source);
    const at = times.time(event.occurredAt);
    switch (event.toStatus) {
      case 'initiated': {
        // Back to initiated from an attempt: it failed, and the agent's retry policy dials it again.
        if (event.fromStatus !== null) {
          const reason = event.failureReason ? REASON_WORDS[event.failureReason] : 'no reason given';
          entries.push({ at, what: `Attempt failed: ${reason}; to be dialled again`, detail: by });
          break;
        }
        entries.push({ at, what: 'Accepted', detail: by });
        const waitedUntil =
          dialled?.occurredAt ?? call.endedAt ?? (call.status === 'initiated' ? now : event.occurredAt);
        if (waitedUntil.getTime() - event.occurredAt.getTime() < QUEUE_SHOWN_MS) break;
        const forWindow = call.notBefore.getTime() > event.occurredAt.getTime() + QUEUE_SHOWN_MS;
        const still = call.status === 'initiated';
        entries.push({
          at,
          what: forWindow ? 'Queued until the calling window opens' : 'Queued for a free slot',
          detail: [
            // The step already says "until the calling window opens": the detail only adds when.
            ...(forWindow ? [`at ${times.time(call.notBefore)}`] : []),
            still
              ? `still waiting; expires ${times.time(call.expiresAt)}`
              : `waited ${formatDuration(Math.round((waitedUntil.getTime() - event.occurredAt.getTime()) / 1000))}`,
          ].join('; '),
        });
        break;
      }
      case 'dialing':
        entries.push({ at, what: 'Dialling', detail: `from ${call.fromNumber}, ${by}` });
        break;
      case 'in_progress':
        entries.push({ at, what: 'Answered', detail: by });
        break;
      case 'completed':
        entries.push({
          at,
          what: 'Completed',
          detail: `${call.durationSeconds === null ? '' : `after ${formatDuration(call.durationSeconds)}, `}${by}`,
        });
        break;
      case 'failed':
        entries.push({
          at,
          what: `Failed: ${event.failureReason ? REASON_WORDS[event.failureReason] : 'no reason given'}`,
          detail: by,
        });
        break;
    }
  }
  return entries;
}

/** What a metadata value is, in words: strings are told apart from numbers, true/false and null. */
export type ValueKind = 'text' | 'number' | 'true/false' | 'null' | 'object' | 'list';

export interface MetadataRow {
  key: string;
  kind: ValueKind;
  /** For text: the string itself (decoded); otherwise the value's JSON, re-indented. */
  value: string;
}

function kindOf(valueText: string): ValueKind {
  const c = valueText[0];
  if (c === '"') return 'text';
  if (c === '{') return 'object';
  if (c === '[') return 'list';
  if (c === 't' || c === 'f') return 'true/false';
  if (c === 'n') return 'null';
  return 'number';
}

/** The top-level members of the metadata's JSON text, in the order written; null when it is not an object. */
export function metadataRows(text: string): MetadataRow[] | null {
  try {
    return objectEntries(text).map(([key, valueText]) => {
      const kind = kindOf(valueText);
      return { key, kind, value: kind === 'text' ? (JSON.parse(valueText) as string) : reindent(valueText) };
    });
  } catch {
    return null;
  }
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * JSON text laid out two spaces per level, token by token: keys keep their order and strings, numbers and escapes
 * their exact spelling (nothing is parsed and written again).
 */
export function reindent(text: string): string {
  let out = '';
  let depth = 0;
  const newline = () => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length;) {
    const c = text[i]!;
    if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end + 1;
    } else if (WHITESPACE.has(c)) {
      i++;
    } else if (c === '{' || c === '[') {
      let next = i + 1;
      while (next < text.length && WHITESPACE.has(text[next]!)) next++;
      const close = c === '{' ? '}' : ']';
      if (text[next] === close) {
        out += c + close;
        i = next + 1;
      } else {
        depth++;
        out += c + newline();
        i++;
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
      i++;
    } else {
      out += c === ',' ? `,${newline()}` : c === ':' ? ': ' : c;
      i++;
    }
  }
  return out;
}
