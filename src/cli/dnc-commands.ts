// callctl's do-not-call commands: add a number to an account's list (with a reason), remove one, print a list, import
// a CSV file (phone_number,reason; every row or none, or with --skip-bad-rows the good ones; each bad row reported
// with its line), read in pieces through the dashboard's streaming import. An agency's list covers the agency and
// all its clients; a client's covers the client. Audited as the operator's.
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { OPERATOR } from '../admin/accounts.js';
import { addToDoNotCall, listDoNotCall, removeFromDoNotCall } from '../admin/do-not-call.js';
import { describeProblems, importDoNotCall } from '../admin/do-not-call-import.js';
import { AdminError } from '../admin/errors.js';
import { normalReason, numberProblem, reasonProblem } from '../domain/do-not-call.js';
import { CLI_IMPORT_MAX_BYTES } from '../domain/do-not-call.js';
import type { Command } from './command-types.js';
import type { Values } from './flags.js';
import { table } from './output.js';

// Mistakes the command line alone shows are usage errors (exit 2); UsageError is not imported from commands.ts
// (which imports this file), so the checks throw their own.
class DncUsageError extends Error {
  override name = 'UsageError';
}

const arg = (args: string[], index: number): string => args[index] ?? '';

/** The reason, which the command line alone shows (the number is read in the account's country when it runs). */
function checkReason(_args: string[], values: Values): void {
  const problem = reasonProblem(normalReason(values.reason));
  if (problem) throw new DncUsageError(problem);
}

const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`;

/** The file, read in pieces as the import takes them (never whole). */
async function openImportFile(file: string) {
  const stat = await fs.stat(file).catch(() => null);
  if (!stat?.isFile()) throw new AdminError(`No file ${file}`);
  if (stat.size > CLI_IMPORT_MAX_BYTES)
    throw new AdminError(`${file} is larger than ${mib(CLI_IMPORT_MAX_BYTES)}: split it and import the parts`);
  return createReadStream(file, { highWaterMark: 64 * 1024 });
}

export const DNC_COMMANDS: Command[] = [
  {
    words: ['dnc', 'add'],
    args: ['account-id', 'e164'],
    flags: ['reason'],
    usage: 'callctl dnc add <account-id> <number> [--reason <text>]',
    summary:
      "Put a number on an account's do-not-call list (an agency's covers its clients): triggers to it are refused, its waiting calls end failed (do_not_call) at once. E.164, or as dialled in the account's country (quote spaces); stored in E.164",
    check: checkReason,
    notice: (result) =>
      result.added === false
        ? 'It was already on the list: its entry is unchanged.'
        : `Added to the list as ${String(result.phone_number)}; ${String(result.waiting_calls_ended)} waiting calls to it ended.`,
    run: ({ storage, now }, args, values) =>
      addToDoNotCall(storage, {
        accountId: arg(args, 0),
        phoneNumber: arg(args, 1),
        reason: values.reason,
        actor: OPERATOR,
        now: now(),
      }),
  },
  {
    words: ['dnc', 'remove'],
    args: ['account-id', 'e164'],
    flags: [],
    usage: 'callctl dnc remove <account-id> <e164>',
    summary: "Take a number off an account's do-not-call list",
    check: (args) => {
      const problem = numberProblem(arg(args, 1));
      if (problem) throw new DncUsageError(problem);
    },
    notice: (result) => (result.removed === false ? 'It was not on the list: nothing changed.' : undefined),
    run: ({ storage, now }, args) =>
      removeFromDoNotCall(storage, {
        accountId: arg(args, 0),
        phoneNumber: arg(args, 1),
        actor: OPERATOR,
        now: now(),
      }),
  },
  {
    words: ['dnc', 'list'],
    args: ['account-id'],
    flags: [],
    usage: 'callctl dnc list <account-id>',
    summary: "Print an account's do-not-call list in number order (a client's agency's list covers it too)",
    human: (result) => {
      const entries = result.entries as Record<string, unknown>[];
      const lines = [`${String(result.count)} numbers on the list of ${String(result.account_id)}`];
      if (entries.length > 0) lines.push(...table(entries, undefined, '  '));
      const agency = result.covered_by_agency as string | null;
      if (agency) lines.push(`The agency's list covers this client too: callctl dnc list ${agency}`);
      return `${lines.join('\n')}\n`;
    },
    run: ({ storage }, args) => listDoNotCall(storage, arg(args, 0), OPERATOR),
  },
  {
    words: ['dnc', 'import'],
    args: ['account-id', 'file.csv'],
    flags: ['skip-bad-rows'],
    usage: 'callctl dnc import <account-id> <file.csv> [--skip-bad-rows]',
    summary: `Import a CSV file (UTF-8; first line phone_number,reason or "Phone Number,Reason", or one number a line; at most ${mib(CLI_IMPORT_MAX_BYTES)}) into an account's do-not-call list: every row or, when any row is bad, none (each bad row is reported with its line); --skip-bad-rows imports the good rows and reports the bad ones`,
    notice: (result) =>
      `Added ${String(result.added)}; skipped ${String(result.already_listed)} already on the list and ${String(result.duplicates_in_file)} repeated in the file` +
      `${result.bad_rows ? `; left out ${result.bad_rows as number} bad rows:\n  ${(result.problems as string[]).join('\n  ')}` : ''}.`,
    run: async ({ storage, now }, args, values) => {
      const file = arg(args, 1);
      const outcome = await importDoNotCall(storage, {
        accountId: arg(args, 0),
        file: await openImportFile(file),
        fileName: path.basename(file),
        actor: OPERATOR,
        now: now(),
        mode: values['skip-bad-rows'] ? 'good_rows' : 'all',
        maxBytes: CLI_IMPORT_MAX_BYTES,
      });
      if (!outcome.ok && 'busy' in outcome) throw new AdminError(`Nothing was imported from ${file}: ${outcome.busy}`);
      if (!outcome.ok)
        throw new AdminError(
          [`Nothing was imported from ${file}:`, ...describeProblems(outcome.problems, outcome.badRows)].join('\n  '),
        );
      return {
        account_id: arg(args, 0),
        rows: outcome.rows,
        added: outcome.added,
        already_listed: outcome.alreadyListed,
        duplicates_in_file: outcome.duplicatesInFile,
        waiting_calls_ended: outcome.waitingCallsEnded,
        bad_rows: outcome.badRows,
        problems: describeProblems(outcome.problems, outcome.badRows),
      };
    },
  },
];

/** The one flag of these commands (added to callctl's option set in commands.ts). */
export const DNC_FLAG_HELP = {
  reason: { value: '<text>', help: 'Why the number must not be called (at most 500 characters, one line)' },
  'skip-bad-rows': {
    value: '',
    help: 'dnc import: import the good rows and report the bad ones (default: none if any is bad)',
  },
};
