// The consent export for an audit: the calls of a period with their consent record and last calling-rules decision,
// as a CSV stream written in short slices (the do-not-call export's conventions: a byte-order mark, CRLF, every cell
// quoted, free text defused for spreadsheets), fed from batches so that memory does not grow with the period.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { safeCell, Slicer } from './do-not-call-csv.js';
import { storedConsent, storedRecords } from './stored-compliance.js';

/** The columns, in order. */
export const CALLS_CSV_COLUMNS = [
  'call_id',
  'created_at',
  'account',
  'agent',
  'phone_number',
  'name',
  'status',
  'recipient_region',
  'consent_type',
  'consent_obtained_at',
  'consent_source',
  'consent_evidence_url',
  'last_verdict',
  'last_checked_at',
  'last_reasons',
] as const;

/** The longest period one export covers, in days (a quarter, both ends included). */
export const EXPORT_PERIOD_MAX_DAYS = 93;

/** A call as the export reads it: its stored consent and decision records as they are (jsonb). */
export interface ExportCall {
  id: string;
  createdAt: Date;
  account: string | null;
  agent: string | null;
  phoneNumber: string;
  name: string | null;
  status: string;
  recipientRegion: string | null;
  consent: unknown;
  /** The last decision record (calls.compliance's last element), or null. */
  lastRecord: unknown;
}

/** A typed day, YYYY-MM-DD, as a count of days (null: no such day). */
function dayNumber(day: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return null;
  const at = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(at).toISOString().slice(0, 10) === day ? at / 86_400_000 : null;
}

/**
 * What is wrong with the period from `from` to `to` (days, YYYY-MM-DD, both included), or null: each a real day, the
 * end not before the start, at most EXPORT_PERIOD_MAX_DAYS days.
 */
export function exportPeriodProblem(from: string, to: string): string | null {
  const [start, end] = [dayNumber(from), dayNumber(to)];
  if (start === null) return `"${from}" is not a day: write the period's first day as YYYY-MM-DD.`;
  if (end === null) return `"${to}" is not a day: write the period's last day as YYYY-MM-DD.`;
  if (end < start) return 'The period ends before it starts.';
  if (end - start + 1 > EXPORT_PERIOD_MAX_DAYS)
    return `The period is ${end - start + 1} days: an export covers at most ${EXPORT_PERIOD_MAX_DAYS} days (export a longer one in parts).`;
  return null;
}

/** One call's cells, in CALLS_CSV_COLUMNS's order: free text defused, times as stored (RFC 3339) or ISO UTC. */
export function exportCells(call: ExportCall): string[] {
  const consent = storedConsent(call.consent);
  const last = storedRecords(call.lastRecord === null ? [] : [call.lastRecord])[0] ?? null;
  return [
    call.id,
    call.createdAt.toISOString(),
    safeCell(call.account),
    safeCell(call.agent),
    call.phoneNumber,
    safeCell(call.name),
    call.status,
    safeCell(call.recipientRegion),
    safeCell(consent?.type ?? null),
    safeCell(consent?.obtained_at ?? null),
    safeCell(consent?.source ?? null),
    safeCell(consent?.evidence_url ?? null),
    last?.verdict ?? '',
    safeCell(last?.checked_at ?? null),
    safeCell(last ? last.reasons.join('; ') : null),
  ];
}

/**
 * The calls as a CSV stream (RFC 4180, CRLF, a byte-order mark so that spreadsheets read UTF-8), fed from batches;
 * every cell quoted, so no locale's separator splits one and a formula can only start a cell, where safeCell defuses
 * it. A failed read ends the stream with the error (a download cut short, never a file that looks whole).
 */
export function exportCallsCsv(batches: AsyncIterable<ExportCall[]>): Readable {
  const output = stringify({
    bom: true,
    header: true,
    columns: [...CALLS_CSV_COLUMNS],
    quoted: true,
    quoted_empty: true,
    record_delimiter: 'windows',
  });
  const slicer = new Slicer();
  async function* records() {
    for await (const batch of batches)
      for (const call of batch) {
        await slicer.turn();
        yield exportCells(call);
      }
  }
  pipeline(Readable.from(records()), output).catch((error: unknown) => output.destroy(error as Error));
  return output;
}
