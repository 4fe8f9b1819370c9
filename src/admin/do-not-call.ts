// Do-not-call lists, for callctl and the dashboard alike: add a number (with a reason), remove one, read a list, import
// a CSV file (all or nothing). An agency's list covers the agency and all its clients; a client's covers the client.
// Every change is audited in the transaction that makes it. Who may change which list is the caller's check.
import { normalReason, numberProblem, parseImport, reasonProblem, type ImportProblem } from '../domain/do-not-call.js';
import type { DoNotCallEntry, Repositories, Storage } from '../storage/index.js';
import { findAccount } from './accounts.js';
import { audit, type Actor } from './audit.js';
import { AdminError } from './errors.js';

/** An import may write this long (a million numbers take tens of seconds on a busy machine). */
const IMPORT_TIMEOUT_MS = 10 * 60_000;

/** Who added an entry, as the list shows it: the user's email, or "operator" (callctl) / "service". */
async function addedByOf(storage: Repositories, actor: Actor): Promise<string> {
  if (actor.kind !== 'user') return actor.kind;
  return (await storage.users.findUserById(actor.userId))?.email ?? 'a user no longer listed';
}

/** An entry as callctl prints it. */
export function entryView(entry: DoNotCallEntry) {
  return {
    phone_number: entry.phoneNumber,
    reason: entry.reason,
    added_by: entry.addedBy,
    added_at: entry.addedAt.toISOString(),
  };
}

/** The number and reason as stored, or an AdminError saying what is wrong (the dashboard and callctl say the same). */
export function checkedEntry(phoneNumber: string, reason: string | null | undefined) {
  const problem = numberProblem(phoneNumber);
  if (problem) throw new AdminError(problem);
  const stored = normalReason(reason);
  const reasonRefused = reasonProblem(stored);
  if (reasonRefused) throw new AdminError(reasonRefused);
  return { phoneNumber, reason: stored };
}

/**
 * Puts the number on the account's list. A number already on it keeps its entry (reason, who, when): `added` is false
 * and nothing is audited.
 */
export async function addToDoNotCall(
  storage: Storage,
  input: { accountId: string; phoneNumber: string; reason?: string | null | undefined; actor: Actor; now: Date },
) {
  const account = await findAccount(storage, input.accountId);
  const { phoneNumber, reason } = checkedEntry(input.phoneNumber, input.reason);
  const now = input.now;
  const { added, entry } = await storage.transaction(async (tx) => {
    const result = await tx.doNotCall.addEntry({
      accountId: account.id,
      phoneNumber,
      reason,
      addedBy: await addedByOf(tx, input.actor),
      addedAt: now,
    });
    if (result.added)
      await audit(tx, account.id, input.actor, 'do_not_call_added', now, { phone_number: phoneNumber, reason });
    return result;
  });
  return { account_id: account.id, added, ...entryView(entry) };
}

/** Takes the number off the account's list; `removed` false when it was not on it (nothing audited then). */
export async function removeFromDoNotCall(
  storage: Storage,
  input: { accountId: string; phoneNumber: string; actor: Actor; now: Date },
) {
  const account = await findAccount(storage, input.accountId);
  const now = input.now;
  const removed = await storage.transaction(async (tx) => {
    const entry = await tx.doNotCall.removeEntry(account.id, input.phoneNumber);
    if (entry)
      await audit(tx, account.id, input.actor, 'do_not_call_removed', now, {
        phone_number: entry.phoneNumber,
        reason: entry.reason,
        added_by: entry.addedBy,
        added_at: entry.addedAt.toISOString(),
      });
    return entry;
  });
  return { account_id: account.id, phone_number: input.phoneNumber, removed: removed !== null };
}

/** The account's whole list in number order (callctl), and the agency whose list covers it too (for a client). */
export async function listDoNotCall(storage: Storage, accountId: string) {
  const account = await findAccount(storage, accountId);
  const entries: ReturnType<typeof entryView>[] = [];
  for await (const batch of storage.doNotCall.eachEntry(account.id)) entries.push(...batch.map(entryView));
  return { account_id: account.id, covered_by_agency: account.agencyId, count: entries.length, entries };
}

/** An import refused as a whole: every bad row, by its line. */
export type ImportOutcome =
  | { ok: true; rows: number; added: number; alreadyListed: number; duplicatesInFile: number }
  | { ok: false; problems: ImportProblem[] };

/**
 * Imports a CSV file (src/domain/do-not-call.ts says its form) into the account's list: every row or none. A file
 * with a bad row imports nothing and every bad row is reported with its line. Numbers already on the list, and a
 * number repeated in the file, are skipped (counted). One audit entry with the counts; each entry carries who added
 * it and when.
 */
export async function importDoNotCall(
  storage: Storage,
  input: { accountId: string; file: Uint8Array; fileName?: string | null; actor: Actor; now: Date },
): Promise<ImportOutcome> {
  const account = await findAccount(storage, input.accountId);
  const { rows, duplicates, problems } = parseImport(input.file);
  if (problems.length > 0) return { ok: false, problems };
  const now = input.now;
  const added = await storage.transaction(
    async (tx) => {
      const count = await tx.doNotCall.addEntries(account.id, rows, await addedByOf(tx, input.actor), now);
      await audit(tx, account.id, input.actor, 'do_not_call_imported', now, {
        ...(input.fileName ? { file: input.fileName } : {}),
        rows: rows.length + duplicates,
        added: count,
        already_listed: rows.length - count,
        duplicates_in_file: duplicates,
      });
      return count;
    },
    { timeoutMs: IMPORT_TIMEOUT_MS },
  );
  return {
    ok: true,
    rows: rows.length + duplicates,
    added,
    alreadyListed: rows.length - added,
    duplicatesInFile: duplicates,
  };
}

/** The problems of a refused import in a few lines: the first `shown`, then how many more. */
export function describeProblems(problems: ImportProblem[], shown = 20): string[] {
  const lines = problems.slice(0, shown).map((p) => (p.line > 0 ? `line ${p.line}: ${p.message}` : p.message));
  if (problems.length > shown) lines.push(`... and ${problems.length - shown} more`);
  return lines;
}
