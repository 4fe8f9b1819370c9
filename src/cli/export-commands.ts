// callctl's consent export: the calls created in a period of days (UTC, both included, at most 93), of one account's
// scope (an agency's: its own calls and its clients'; a client's: its own and those its agency's key placed on its
// agents) or of every account, with their consent and last calling-rules decision, written to a CSV file in batches
// (src/domain/calls-csv.ts, the dashboard's export). Written beside the file and renamed at the end: a failed export
// leaves no file that looks whole.
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { OPERATOR } from '../admin/accounts.js';
import { findAccount } from '../admin/reach.js';
import { exportCallsCsv, exportPeriodProblem, type ExportCall } from '../domain/calls-csv.js';
import { parseUtcTime } from '../views/format/time.js';
import type { Storage } from '../storage/index.js';
import type { Command } from './command-types.js';

// Mistakes the command line alone shows are usage errors (exit 2); commands.ts imports this file, so its own class.
type ExportOwners = Parameters<Storage['history']['eachCallForExport']>[0];

class ExportUsageError extends Error {
  override name = 'UsageError';
}

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
    args: [],
    flags: ['from', 'to', 'account', 'out'],
    required: ['from', 'to', 'out'],
    usage: 'callctl calls export --from <YYYY-MM-DD> --to <YYYY-MM-DD> [--account <account-id>] --out <file.csv>',
    summary:
      'Export the calls created in a period (UTC days, both included, at most 93) with their consent and last calling-rules decision, as CSV for an audit: one account (an agency with its clients) or all',
    examples: ['callctl calls export --from 2026-01-01 --to 2026-03-31 --account <account-id> --out q1-consent.csv'],
    check: (_args, values) => {
      const problem = exportPeriodProblem(values.from ?? '', values.to ?? '');
      if (problem) throw new ExportUsageError(problem);
    },
    run: async ({ storage }, _args, values) => {
      const from = parseUtcTime(values.from!)!;
      const to = parseUtcTime(values.to!, true)!;
      let owners: ExportOwners = { all: true };
      if (values.account !== undefined) {
        const account = await findAccount(storage, values.account, OPERATOR);
        owners =
          account.kind === 'agency' ? { agencyId: account.id } : { accountIds: [account.id], listedFor: [account.id] };
      }
      const out = values.out!;
      const partial = `${out}.partial`;
      const count = { calls: 0 };
      try {
        await pipeline(
          exportCallsCsv(counted(storage.history.eachCallForExport(owners, from, to), count)),
          createWriteStream(partial, { flags: 'wx' }),
        );
        await fs.rename(partial, out);
      } catch (error) {
        await fs.rm(partial, { force: true });
        throw error;
      }
      return {
        file: out,
        account_id: values.account ?? null,
        from: from.toISOString(),
        to: to.toISOString(),
        calls: count.calls,
      };
    },
  },
];

/** The flags of this command (added to callctl's option set in flags.ts). */
export const EXPORT_FLAG_HELP = {
  from: { value: '<YYYY-MM-DD>', help: "calls export: the period's first day, UTC" },
  to: { value: '<YYYY-MM-DD>', help: "calls export: the period's last day, UTC, included (at most 93 days in all)" },
  out: { value: '<file.csv>', help: 'calls export: the CSV file to write (written whole, or not at all)' },
};
