// callctl's consent export: the calls created in a period of days (UTC, both included, at most 93) of one account's
// scope (an agency's: its own calls and its clients'; a client's: its own and those its agency's key placed on its
// agents), with their consent and last calling-rules decision, as CSV in batches (src/domain/calls-csv.ts, the
// dashboard's export): on stdout, the CSV alone (ctx.stdout, at stdout's pace); or to a file, written beside it and
// renamed at the end, so that a failed export leaves no file that looks whole.
import fs from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { OPERATOR } from '../admin/accounts.js';
import { findAccount } from '../admin/reach.js';
import { exportCallsCsv, exportPeriodProblem, type ExportCall } from '../domain/calls-csv.js';
import { parseUtcTime } from '../views/format/time.js';
import type { Storage } from '../storage/index.js';
import { RAW_OUTPUT, type Command } from './command-types.js';
import { UsageError } from './usage-error.js';

type ExportOwners = Parameters<Storage['history']['eachCallForExport']>[0];

/** Counts the calls as they pass, for the report. */
async function* counted(batches: AsyncIterable<ExportCall[]>, count: { calls: number }) {
  for await (const batch of batches) {
    count.calls += batch.length;
    yield batch;
  }
}

export const EXPORT_COMMANDS: Command[] = [
  {
    words: ['calls', 'export'],
    args: ['account-id'],
    flags: ['from', 'to', 'out'],
    required: ['from', 'to'],
    usage: 'callctl calls export <account-id> --from <YYYY-MM-DD> --to <YYYY-MM-DD> [--out <file.csv>]',
    summary:
      "Export an account's calls created in a period (UTC days, both included, at most 93) with their consent and last calling-rules decision, as CSV for an audit (an agency: with its clients'): on stdout, the CSV alone; with --out, to that file (prints the result object; with --json, --out is needed)",
    examples: [
      'callctl calls export <account-id> --from 2026-01-01 --to 2026-03-31 > q1-consent.csv',
      'callctl calls export <account-id> --from 2026-01-01 --to 2026-03-31 --out q1-consent.csv --json',
    ],
    check: (_args, values) => {
      const problem = exportPeriodProblem(values.from ?? '', values.to ?? '');
      if (problem) throw new UsageError(problem);
      if (values.json && values.out === undefined)
        throw new UsageError(
          '--json prints one JSON object on stdout: give --out <file.csv> (without --out and --json the CSV goes to stdout)',
        );
    },
    run: async ({ storage, stdout }, args, values) => {
      const from = parseUtcTime(values.from!)!;
      const to = parseUtcTime(values.to!, true)!;
      // Found before anything is written: an unknown account prints nothing on stdout and writes no file.
      const account = await findAccount(storage, args[0] ?? '', OPERATOR);
      const owners: ExportOwners =
        account.kind === 'agency' ? { agencyId: account.id } : { accountIds: [account.id], listedFor: [account.id] };
      const count = { calls: 0 };
      const csv = () => exportCallsCsv(counted(storage.history.eachCallForExport(owners, from, to), count));
      const out = values.out;
      if (out === undefined) {
        // A failure half-way exits 1 with its reason on stderr: what stdout got is then cut short.
        await pipeline(csv(), async (source: AsyncIterable<string | Uint8Array>) => {
          for await (const chunk of source) await stdout(chunk);
        });
        return RAW_OUTPUT;
      }
      const partial = `${out}.partial`;
      // Opened first: another export's .partial (EEXIST) is refused and left alone.
      const file = await fs.open(partial, 'wx');
      try {
        await pipeline(csv(), file.createWriteStream());
        await fs.rename(partial, out);
      } catch (error) {
        await fs.rm(partial, { force: true });
        throw error;
      }
      return { file: out, account_id: account.id, from: from.toISOString(), to: to.toISOString(), calls: count.calls };
    },
  },
];

/** The flags of this command (added to callctl's option set in flags.ts). */
export const EXPORT_FLAG_HELP = {
  from: { value: '<YYYY-MM-DD>', help: "calls export: the period's first day, UTC" },
  to: { value: '<YYYY-MM-DD>', help: "calls export: the period's last day, UTC, included (at most 93 days in all)" },
  out: {
    value: '<file.csv>',
    help: 'calls export: the CSV file to write (written whole, or not at all: beside it as <file.csv>.partial, then renamed); without it, stdout',
  },
};
