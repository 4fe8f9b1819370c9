// The voice-agent runtime's result in words, for the call page, the Calls list and callctl: its outcome label, its
// summary, data (key order kept), the transcript as a conversation, and links that are only ever https.
import type { CallResultData, TranscriptEntry } from '../../../schemas/agent-runtime.js';
import { memberText } from '../../domain/raw-json.js';
import { metadataRows, type MetadataRow } from '../pages/call-timeline.js';

/** The result as the call page shows it. */
export interface ResultView {
  /** The runtime's outcome label (`appointment_booked`), or null when it gave none. */
  outcome: string | null;
  /** The summary's paragraphs (split at blank lines), empty when none. */
  summary: string[];
  /** The data's members in the order the runtime wrote them; null when it gave none (or not an object). */
  data: MetadataRow[] | null;
  /** The conversation, in order: who spoke, what, and when since its first line (m:ss). */
  transcript: { speaker: 'agent' | 'callee'; who: string; text: string; at: string; offset: string }[];
  /** Links (https only; anything else is left out). */
  links: { label: string; href: string }[];
  /** The callee asked not to be called again. */
  optOut: boolean;
  /** When the service received it (ISO), and whether it came after the terminal event was sent. */
  receivedAt: string;
  late: boolean;
}

/** An https URL as a link target, or null: any other scheme (javascript:, data:, http:) is never a link. */
export function httpsHref(value: unknown): string | null {
  if (typeof value !== 'string' || !value.startsWith('https://')) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** m:ss from `start` to `at` (h:mm:ss past an hour); empty when either is not a time. */
function offsetWords(start: number, at: number): string {
  if (!Number.isFinite(start) || !Number.isFinite(at)) return '';
  const total = Math.max(0, Math.round((at - start) / 1000));
  const [h, m, s] = [Math.floor(total / 3600), Math.floor(total / 60) % 60, total % 60];
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** The published result of its stored JSON text (null when unreadable: a row edited by hand shows none). */
export function parseResult(text: string): CallResultData | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as CallResultData) : null;
  } catch {
    return null;
  }
}

/** The call page's view of a stored result (`body` its JSON text); null when there is none. */
export function resultView(stored: { body: string; inEvent: boolean } | null): ResultView | null {
  const result = stored ? parseResult(stored.body) : null;
  if (!stored || !result) return null;
  // The data's own text: JSON.parse would move integer-like keys first.
  const dataText = memberText(stored.body, 'data');
  const data = dataText && dataText !== 'null' ? metadataRows(dataText) : null;
  // A row edited by hand may hold anything: only entries that are objects are lines.
  const entries = (Array.isArray(result.transcript) ? (result.transcript as unknown[]) : []).filter(
    (e): e is TranscriptEntry => typeof e === 'object' && e !== null,
  );
  const start = entries.length ? Date.parse(entries[0]!.at) : NaN;
  const links = [
    { label: 'Transcript', href: httpsHref(result.transcript_url) },
    { label: 'Recording', href: httpsHref(result.recording_url) },
  ].filter((l): l is { label: string; href: string } => l.href !== null);
  return {
    outcome: typeof result.outcome === 'string' ? result.outcome : null,
    summary:
      typeof result.summary === 'string'
        ? result.summary
            .split(/\r?\n\s*\r?\n/)
            .map((p) => p.trim())
            .filter(Boolean)
        : [],
    data,
    transcript: entries.map((e) => ({
      speaker: e.speaker === 'agent' ? 'agent' : 'callee',
      who: e.speaker === 'agent' ? 'Agent' : 'Callee',
      text: String(e.text),
      at: String(e.at),
      offset: offsetWords(start, Date.parse(e.at)),
    })),
    links,
    optOut: result.opt_out === true,
    receivedAt: String(result.received_at),
    late: !stored.inEvent,
  };
}

/** The outcome label as the Calls list and callctl show it: the label itself ("-" when none). */
export function outcomeWords(outcome: string | null | undefined): string {
  return outcome ?? '-';
}
