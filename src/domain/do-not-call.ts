// The do-not-call list's rules, without the database: what an entry may be (a number the trigger would accept, as
// given: E.164 compared exactly, never normalised; a reason of one readable line), how a search is read (a number's
// beginning or words of the reason), and the CSV a list is imported from and exported to.
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { codePoints, readableNameProblem } from '../../schemas/text.js';
import { isValidE164 } from './phone-number.js';

/** A reason has at most this many characters (Unicode code points). */
export const REASON_MAX_LENGTH = 500;
/** The largest CSV file the dashboard imports (the request's file part; callctl takes larger ones). */
export const DASHBOARD_IMPORT_MAX_BYTES = 2 * 1024 * 1024;
/** The largest CSV file callctl imports: about two million numbers with short reasons. */
export const CLI_IMPORT_MAX_BYTES = 64 * 1024 * 1024;
/** The CSV columns, in the export's order; an import needs phone_number and reads reason (the others are ignored). */
export const CSV_COLUMNS = ['phone_number', 'reason', 'added_by', 'added_at'] as const;

/** Why `number` cannot be listed (the trigger's own rule), or null. */
export function numberProblem(number: string): string | null {
  return isValidE164(number)
    ? null
    : `"${number}" is not a phone number in E.164 form (like +14155552671): a plus, the country code and the number, nothing else`;
}

/** The reason as stored: trimmed, null when empty. */
export function normalReason(reason: string | null | undefined): string | null {
  const trimmed = reason?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** Why a (trimmed) reason cannot be stored, or null. */
export function reasonProblem(reason: string | null): string | null {
  if (reason === null) return null;
  if (codePoints(reason) > REASON_MAX_LENGTH) return `A reason has at most ${REASON_MAX_LENGTH} characters`;
  const problem = readableNameProblem(reason);
  return problem && `A reason ${problem}`;
}

/** What a search box's text asks for: numbers beginning with `prefix` ("+1415"), or reasons containing `text`. */
export type DoNotCallSearch = { kind: 'prefix'; prefix: string } | { kind: 'reason'; text: string } | null;

/** Digits, with or without the plus, are a number's beginning; anything else is searched for in the reasons. */
export function parseSearch(query: string | undefined): DoNotCallSearch {
  const text = query?.trim() ?? '';
  if (text === '') return null;
  const digits = /^\+?(\d{1,15})$/.exec(text)?.[1];
  return digits ? { kind: 'prefix', prefix: `+${digits}` } : { kind: 'reason', text };
}

/** One row of an import, by the line of the file it starts on. */
export interface ImportRow {
  line: number;
  phoneNumber: string;
  reason: string | null;
}

export interface ImportProblem {
  /** The line of the file (1 is the header); 0: the file as a whole. */
  line: number;
  message: string;
}

/**
 * The rows of an import, or every problem it has (then nothing is imported). A CSV file in UTF-8 (a byte-order mark
 * is allowed), comma-separated, quoted as RFC 4180 says; its first line names the columns: phone_number, and
 * optionally reason (added_by and added_at, written by the export, are read and ignored). Blank lines are skipped;
 * cells are trimmed. A leading apostrophe, which the export writes before a reason starting with = + - @ (so that a
 * spreadsheet does not run it as a formula) and spreadsheets accept before a number, is taken off. A number listed
 * twice in the file is one row: the first, with its reason.
 */
export function parseImport(bytes: Uint8Array): { rows: ImportRow[]; duplicates: number; problems: ImportProblem[] } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return fileProblem('The file is not UTF-8 text: save it as "CSV UTF-8" and try again');
  }
  let records: { record: string[]; info: { lines: number } }[];
  try {
    // With `info`, each record comes with the parser's state when it ended (csv-parse's types do not say so).
    records = parse(text, {
      bom: true,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      trim: true,
    }) as unknown as { record: string[]; info: { lines: number } }[];
  } catch (error) {
    const line = (error as { lines?: number }).lines ?? 0;
    const what =
      (error as { code?: string }).code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quote is never closed' : 'it is not CSV';
    return { rows: [], duplicates: 0, problems: [{ line, message: `The file cannot be read: ${what}` }] };
  }
  const [header, ...body] = records;
  if (!header) return fileProblem('The file is empty: its first line must be phone_number,reason');
  const columns = header.record.map((name) => name.toLowerCase());
  const problems: ImportProblem[] = [];
  const unknown = columns.filter((name) => !(CSV_COLUMNS as readonly string[]).includes(name));
  if (unknown.length > 0 || !columns.includes('phone_number') || new Set(columns).size !== columns.length)
    return fileProblem(
      `The first line must name the columns phone_number and reason (found "${header.record.join(',')}")`,
      1,
    );
  const numberAt = columns.indexOf('phone_number');
  const reasonAt = columns.indexOf('reason');
  const rows: ImportRow[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  for (const { record, info } of body) {
    if (record.every((cell) => cell === '')) continue;
    // A record ends on info.lines; one with line breaks inside a quoted cell began that many lines earlier.
    const line = info.lines - record.reduce((n, cell) => n + (cell.match(/\r\n|\r|\n/g)?.length ?? 0), 0);
    if (record.length > columns.length) {
      problems.push({ line, message: `${record.length} cells, but the first line names ${columns.length} columns` });
      continue;
    }
    const phoneNumber = unquoted(record[numberAt] ?? '');
    const reason = normalReason(reasonAt < 0 ? null : unquoted(record[reasonAt] ?? ''));
    const problem = (phoneNumber === '' ? 'No phone number' : numberProblem(phoneNumber)) ?? reasonProblem(reason);
    if (problem) problems.push({ line, message: problem });
    else if (seen.has(phoneNumber)) duplicates++;
    else {
      seen.add(phoneNumber);
      rows.push({ line, phoneNumber, reason });
    }
  }
  return problems.length > 0 ? { rows: [], duplicates: 0, problems } : { rows, duplicates, problems };
}

function fileProblem(message: string, line = 0) {
  return { rows: [], duplicates: 0, problems: [{ line, message }] };
}

/** What a spreadsheet would run as a formula: a cell beginning with = + - @, a tab or a carriage return (OWASP). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A cell taken from a file: without the apostrophe a spreadsheet (or our export) put before a formula character. */
function unquoted(cell: string): string {
  return cell.startsWith("'") && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/** A free-text cell for a spreadsheet: an apostrophe before a formula character, so that it is shown, never run. */
export function safeCell(text: string | null): string {
  if (text === null) return '';
  return FORMULA_START.test(text) ? `'${text}` : text;
}

export interface ExportEntry {
  phoneNumber: string;
  reason: string | null;
  addedBy: string;
  addedAt: Date;
}

/** The export's first line. */
export function csvHeader(): string {
  return stringify([[...CSV_COLUMNS]], { record_delimiter: 'windows' });
}

/**
 * Entries as CSV lines (RFC 4180: CRLF, quotes where needed). The number is E.164 (a plus and digits: a spreadsheet
 * may read it as a number, never as a formula that does anything); the reason and who added it are people's text, so
 * a formula character at their start gets an apostrophe (parseImport takes it off again).
 */
export function csvLines(entries: ExportEntry[]): string {
  return stringify(
    entries.map((e) => [e.phoneNumber, safeCell(e.reason), safeCell(e.addedBy), e.addedAt.toISOString()]),
    { record_delimiter: 'windows' },
  );
}
