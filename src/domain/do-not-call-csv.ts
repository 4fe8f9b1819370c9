// The CSV a do-not-call list is imported from and exported to, read and written as streams in short slices: one
// tenant's large file never holds the event loop for more than a few milliseconds, and what is kept in memory does
// not grow with the file (rows leave in batches; the caller keeps what it needs of them).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';
import { stringify as stringifySync } from 'csv-stringify/sync';
import { normalReason, reasonProblem } from './do-not-call.js';
import { parseTypedNumber } from './typed-phone-number.js';

/** The CSV columns, in the export's order; an import needs the number and reads the reason (the others are ignored). */
export const CSV_COLUMNS = ['phone_number', 'reason', 'added_by', 'added_at'] as const;

/** Rows per batch an import hands on (each batch is one short write). */
export const IMPORT_BATCH_ROWS = 1_000;
/** The longest a slice of reading or writing runs before it lets other work (other tenants' requests) run. */
const SLICE_MS = 4;
/** The bytes the parser takes at a time: parsing one piece is well under a slice. */
const PIECE_BYTES = 16 * 1024;

/** Gives the event loop a turn once the current slice of work has run `SLICE_MS`. */
export class Slicer {
  private started = performance.now();
  async turn(): Promise<void> {
    if (performance.now() - this.started < SLICE_MS) return;
    await nextTurn();
    this.started = performance.now();
  }
}

/** One row of an import, by the line of the file it starts on; the number in E.164 as it will be stored. */
export interface ImportRow {
  line: number;
  phoneNumber: string;
  reason: string | null;
}

export interface ImportProblem {
  /** The line of the file (1 is the first); 0: the file as a whole. */
  line: number;
  message: string;
}

/** A slice of an import: its good rows (at most IMPORT_BATCH_ROWS) and its bad ones. `fatal`: the file stops here. */
export interface ImportBatch {
  rows: ImportRow[];
  problems: ImportProblem[];
  fatal?: boolean;
}

/** A header cell as people write it ("Phone Number", " phone-number ", "E164") -> the column it names, or null. */
const HEADER_NAMES: Record<string, (typeof CSV_COLUMNS)[number]> = {
  phone_number: 'phone_number',
  phone: 'phone_number',
  number: 'phone_number',
  phone_no: 'phone_number',
  telephone: 'phone_number',
  telephone_number: 'phone_number',
  e164: 'phone_number',
  reason: 'reason',
  note: 'reason',
  notes: 'reason',
  comment: 'reason',
  added_by: 'added_by',
  added_at: 'added_at',
};

function columnOf(cell: string): (typeof CSV_COLUMNS)[number] | null {
  const name = cell
    .trim()
    .toLowerCase()
    .replace(/[\s_.-]+/g, '_');
  return HEADER_NAMES[name] ?? null;
}

/** The columns a first line names, or null when it is not a header. */
function headerOf(record: string[]): (string | null)[] | null {
  const columns = record.map(columnOf);
  if (!columns.includes('phone_number') || columns.some((c) => c === null)) return null;
  return new Set(columns).size === columns.length ? columns : null;
}

/** A cell taken from a file: trimmed, without the one apostrophe the export (or a spreadsheet) put at its start. */
function unquoted(cell: string): string {
  return cell.startsWith("'") ? cell.slice(1) : cell;
}

class FileProblem extends Error {}

/** The source's bytes in pieces of at most PIECE_BYTES, checked as UTF-8 as they pass, up to `maxBytes`. */
async function* pieces(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxBytes: number) {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytes = 0;
  for await (const chunk of source) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw new FileProblem(`The file is larger than ${maxBytes / 1024 / 1024} MiB`);
    for (let start = 0; start < chunk.length; start += PIECE_BYTES) {
      const piece = chunk.subarray(start, start + PIECE_BYTES);
      try {
        decoder.decode(piece, { stream: true });
      } catch {
        throw new FileProblem('The file is not UTF-8 text: save it as "CSV UTF-8" and try again');
      }
      yield Buffer.from(piece.buffer, piece.byteOffset, piece.length);
    }
  }
  try {
    decoder.decode();
  } catch {
    throw new FileProblem('The file is not UTF-8 text: save it as "CSV UTF-8" and try again');
  }
}

/** Why the first line is refused, in words. */
function headerProblem(record: string[]): string {
  const line = record.join(',');
  const found = line.length > 80 ? `${line.slice(0, 80)}…` : line;
  return (
    `The first line must name the columns phone_number and reason (as "Phone Number,Reason" too), or be the first ` +
    `number of a list without a header (found "${found}")`
  );
}

/**
 * Reads an import, a slice at a time: batches of good rows and the bad rows' problems, by line. A CSV file in UTF-8 (a
 * byte-order mark is allowed), comma-separated, quoted as RFC 4180 says. Its first line names the columns (phone
 * number, and optionally reason; added_by and added_at, written by the export, are read and ignored; case, spaces and
 * common names such as "Phone Number" or "Notes" are understood), or is already a number: then the file is a plain
 * list, one number a line with an optional reason after it. Numbers are read as people write them, in `country` when
 * they have no plus ("(415) 555-2671"), and handed on in E.164. Blank lines are skipped; cells are trimmed; one
 * apostrophe at a cell's start is taken off (the export writes one before a formula character or an apostrophe, and
 * spreadsheets take one as "text"). A file-level problem (not UTF-8, not CSV, too large) ends the reading with a
 * `fatal` batch.
 */
export async function* readImport(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: { country: string; maxBytes: number },
): AsyncGenerator<ImportBatch> {
  const parser = parse({ bom: true, info: true, relax_column_count: true, skip_empty_lines: true, trim: true });
  const feeding = pipeline(Readable.from(pieces(source, options.maxBytes)), parser);
  // Its rejection is the parser's error, which the loop below meets too; this keeps it from being unhandled.
  feeding.catch(() => undefined);
  const slicer = new Slicer();
  let columns: (string | null)[] | null = null;
  let rows: ImportRow[] = [];
  let problems: ImportProblem[] = [];
  try {
    // With `info`, each record comes with the parser's state when it ended (csv-parse's types do not say so).
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      await slicer.turn();
      if (record.every((cell) => cell === '')) continue;
      // A record ends on info.lines; one with line breaks inside a quoted cell began that many lines earlier.
      const line = info.lines - record.reduce((n, cell) => n + (cell.match(/\r\n|\r|\n/g)?.length ?? 0), 0);
      if (columns === null) {
        columns = headerOf(record);
        if (columns !== null) continue;
        if (record.length > 2 || !('e164' in parseTypedNumber(unquoted(record[0] ?? ''), options.country))) {
          yield { rows: [], problems: [{ line, message: headerProblem(record) }], fatal: true };
          return;
        }
        columns = ['phone_number', 'reason'];
      }
      const row = readRow(record, columns, line, options.country);
      if ('message' in row) problems.push(row);
      else rows.push(row);
      if (rows.length >= IMPORT_BATCH_ROWS || problems.length >= IMPORT_BATCH_ROWS) {
        yield { rows, problems };
        rows = [];
        problems = [];
      }
    }
  } catch (error) {
    yield { rows, problems: [...problems, fileProblemOf(error)], fatal: true };
    return;
  } finally {
    parser.destroy();
  }
  if (columns === null) {
    yield {
      rows: [],
      problems: [{ line: 0, message: 'The file is empty: its first line must be phone_number,reason' }],
      fatal: true,
    };
    return;
  }
  if (rows.length > 0 || problems.length > 0) yield { rows, problems };
}

function readRow(
  record: string[],
  columns: (string | null)[],
  line: number,
  country: string,
): ImportRow | ImportProblem {
  if (record.length > columns.length)
    return { line, message: `${record.length} cells, but the first line names ${columns.length} columns` };
  const numberAt = columns.indexOf('phone_number');
  const reasonAt = columns.indexOf('reason');
  const written = unquoted(record[numberAt] ?? '');
  const reason = normalReason(reasonAt < 0 ? null : unquoted(record[reasonAt] ?? ''));
  if (written === '') return { line, message: 'No phone number' };
  const read = parseTypedNumber(written, country);
  if (!('e164' in read)) return { line, message: writtenNumberProblem(written, country) };
  const problem = reasonProblem(reason);
  return problem ? { line, message: problem } : { line, phoneNumber: read.e164, reason };
}

/** Why a number as typed cannot be read, in the words of the add form and the import alike. */
export function writtenNumberProblem(written: string, country: string): string {
  return `"${written}" is not a phone number: write it in E.164 (like +14155552671), or as it is dialled in ${country}`;
}

function fileProblemOf(error: unknown): ImportProblem {
  if (error instanceof FileProblem) return { line: 0, message: error.message };
  if (error instanceof CsvError) {
    const line = (error as CsvError & { lines?: number }).lines ?? 0;
    const what = error.code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quote is never closed' : 'it is not CSV';
    return { line, message: `The file cannot be read: ${what}` };
  }
  throw error;
}

/** What a spreadsheet would run as a formula (= + - @, a tab or a carriage return: OWASP), or an apostrophe. */
const NEEDS_APOSTROPHE = /^[=+\-@\t\r']/;

/**
 * A free-text cell for a spreadsheet: an apostrophe before a formula character, so that it is shown, never run, and
 * before an apostrophe, so that reading it back (which takes one off) gives the text as it was.
 */
export function safeCell(text: string | null): string {
  if (text === null) return '';
  return NEEDS_APOSTROPHE.test(text) ? `'${text}` : text;
}

export interface ExportEntry {
  phoneNumber: string;
  reason: string | null;
  addedBy: string;
  addedAt: Date;
}

/** The export's layout: every cell quoted, CRLF (RFC 4180). */
const EXPORT_OPTIONS = { quoted: true, quoted_empty: true, record_delimiter: 'windows' } as const;

/**
 * The list as a CSV stream (RFC 4180, CRLF, a byte-order mark so that spreadsheets read UTF-8), fed from batches of
 * entries. Every cell is quoted, so that no separator a spreadsheet's locale uses (`,` or `;`) splits one, and a
 * formula can only be at a cell's start, where safeCell defuses it; the number is E.164 (a plus and digits). Reading
 * the file back gives the same numbers and reasons (export, import, export is the identity on them). One chunk per
 * batch, not per entry: a stream of 190,000 one-line chunks cost its reader (a socket's writes, or a test's
 * injected response joining them) tens of milliseconds in one turn of the loop at the end.
 */
export function exportCsv(batches: AsyncIterable<ExportEntry[]>): Readable {
  const slicer = new Slicer();
  async function* chunks() {
    yield `\ufeff${stringifySync([[...CSV_COLUMNS]], EXPORT_OPTIONS)}`;
    for await (const batch of batches) {
      for (let i = 0; i < batch.length; i += EXPORT_SLICE_ROWS) {
        await slicer.turn();
        const rows = batch
          .slice(i, i + EXPORT_SLICE_ROWS)
          .map((e) => [e.phoneNumber, safeCell(e.reason), safeCell(e.addedBy), e.addedAt.toISOString()]);
        yield stringifySync(rows, EXPORT_OPTIONS);
      }
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

/** Rows written per chunk of the export (about 70 KB). */
const EXPORT_SLICE_ROWS = 1_000;
