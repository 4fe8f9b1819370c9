// The do-not-call CSV without the database: every cell of the export quoted (no `;` or `,` splits a cell into a
// formula) and defused at its start; export -> import -> export the identity on numbers and reasons (a property test);
// the import's header variants, plain lists, numbers as people write them, and its line numbers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REASON_MAX_LENGTH, normalReason, reasonProblem } from '../../src/domain/do-not-call.js';
import { exportCsv, readImport, type ExportEntry, type ImportBatch } from '../../src/domain/do-not-call-csv.js';
import { parseTypedNumber } from '../../src/domain/typed-phone-number.js';

const AT = new Date('2054-01-02T03:04:05.000Z');

async function exported(entries: ExportEntry[]): Promise<string> {
  let text = '';
  for await (const chunk of exportCsv(
    (async function* () {
      yield entries;
    })(),
  ))
    text += String(chunk);
  return text;
}

async function imported(text: string, country = 'US') {
  const batches: ImportBatch[] = [];
  for await (const batch of readImport([Buffer.from(text)], { country, maxBytes: 2 * 1024 * 1024 }))
    batches.push(batch);
  return { rows: batches.flatMap((b) => b.rows), problems: batches.flatMap((b) => b.problems) };
}

const entry = (phoneNumber: string, reason: string | null): ExportEntry => ({
  phoneNumber,
  reason,
  addedBy: 'operator',
  addedAt: AT,
});

describe('the export', () => {
  it('quotes every cell and defuses a formula at its start, whatever the separator a spreadsheet uses', async () => {
    const text = await exported([
      entry('+14155550100', 'x;=1+1;'),
      entry('+14155550101', '=1+1'),
      entry('+14155550102', "'=x"),
      entry('+14155550103', null),
    ]);
    expect(text.split('\r\n')).toEqual([
      '\ufeff"phone_number","reason","added_by","added_at"',
      '"+14155550100","x;=1+1;","operator","2054-01-02T03:04:05.000Z"',
      `"+14155550101","'=1+1","operator","2054-01-02T03:04:05.000Z"`,
      `"+14155550102","''=x","operator","2054-01-02T03:04:05.000Z"`,
      '"+14155550103","","operator","2054-01-02T03:04:05.000Z"',
      '',
    ]);
    // Every cell quoted: a spreadsheet splitting at `;` (or `,`) splits between cells only, never inside one.
    for (const line of text
      .replace(/^\ufeff/, '')
      .split('\r\n')
      .slice(0, -1))
      expect(line).toMatch(/^"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")*$/);
  });

  it('reads back as it was: export -> import -> export is the identity on numbers and reasons', async () => {
    const anyReason = fc
      .string({ unit: 'binary', maxLength: 60 })
      .map((text) => normalReason(text))
      .filter((text) => reasonProblem(text) === null && (text?.length ?? 0) <= REASON_MAX_LENGTH);
    // What spreadsheets and the export treat specially, often enough to be tried.
    const special = fc.constantFrom("'=x", "''=y", "'", "'+cmd", '=1+1', '@SUM(A1)', 'x;=1+1;', '-2', '"q"');
    const reason = fc.oneof(anyReason, special);
    const list = fc.uniqueArray(fc.record({ n: fc.integer({ min: 0, max: 9_999_999 }), reason }), {
      selector: (e) => e.n,
      maxLength: 20,
    });
    await fc.assert(
      fc.asyncProperty(list, async (items) => {
        const entries = items
          .map(({ n, reason: r }) => entry(`+1202${String(n).padStart(7, '0')}`, r))
          .sort((a, b) => a.phoneNumber.localeCompare(b.phoneNumber));
        const first = await exported(entries);
        const { rows, problems } = await imported(first);
        expect(problems).toEqual([]);
        // The list read back is the list written, and so is its export.
        expect(rows.map((r) => [r.phoneNumber, r.reason])).toEqual(entries.map((e) => [e.phoneNumber, e.reason]));
        const again = await exported(rows.map((r) => entry(r.phoneNumber, r.reason)));
        expect(again).toBe(first);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the import', () => {
  it('reads header variants, numbers as people write them, and leaves what it cannot read by its line', async () => {
    const { rows, problems } = await imported(
      ' Phone-Number , Notes \n' +
        '(415) 555-0100,"two\nlines"\n+1 415 555 0101,ok\n' +
        "'+14155550102,'=1\n555-01,short\n+14155550103,a,b\n",
    );
    expect(rows).toEqual([
      { line: 4, phoneNumber: '+14155550101', reason: 'ok' },
      { line: 5, phoneNumber: '+14155550102', reason: '=1' },
    ]);
    expect(problems).toEqual([
      { line: 2, message: 'A reason must not contain control characters such as line breaks or tabs' },
      {
        line: 6,
        message: '"555-01" is not a phone number: write it in E.164 (like +14155552671), or as it is dialled in US',
      },
      { line: 7, message: '3 cells, but the first line names 2 columns' },
    ]);
  });

  it('reads a plain list of numbers, in the country given, and refuses a first line that is neither', async () => {
    expect((await imported('020 7946 0958\n+14155550100, a reason\n', 'GB')).rows).toEqual([
      { line: 1, phoneNumber: '+442079460958', reason: null },
      { line: 2, phoneNumber: '+14155550100', reason: 'a reason' },
    ]);
    const refused = await imported('telefono,motivo\n+14155550100,x\n');
    expect(refused.rows).toEqual([]);
    expect(refused.problems[0]!.message).toContain('(found "telefono,motivo")');
  });

  it('never changes what the trigger accepts: E.164 as given is read as it is', () => {
    for (const number of ['+14155552671', '+442071838750', '+80012345678'])
      expect(parseTypedNumber(number, 'US')).toMatchObject({ e164: number });
  });
});
