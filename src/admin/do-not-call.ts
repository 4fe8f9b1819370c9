// Do-not-call lists, for callctl and the dashboard alike: add a number (with a reason), remove one, read a list (the
// import is do-not-call-import.ts). An agency's list covers the agency and all its clients; a client's covers the
// client. Every change is audited in the transaction that makes it; a number newly listed ends the waiting calls to it
// of the accounts the list covers at once. Only a list of an account the actor reaches is read or changed (reach.ts):
// another is one that does not exist.
import { normalReason, reasonProblem } from '../domain/do-not-call.js';
import { writtenNumberProblem } from '../domain/do-not-call-csv.js';
import { DEFAULT_COUNTRY, parseTypedNumber } from '../domain/typed-phone-number.js';
import { transitionCalls } from '../calls/transition.js';
import type { DoNotCallEntry, Repositories, Storage } from '../storage/index.js';
import { accountCountry } from './account-country.js';
import { audit, type Actor } from './audit.js';
import { AdminError } from './errors.js';
import { findAccount } from './reach.js';

/** Waiting calls ended per transition transaction (each locks its calls). */
const END_BATCH = 500;

/** Who added an entry, as the list shows it: the user's email, or "operator" (callctl) / "service". */
export async function addedByOf(storage: Repositories, actor: Actor): Promise<string> {
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

/**
 * The number (as people write it, read in `country` when it has no plus) and reason as stored, or an AdminError
 * saying what is wrong (the dashboard and callctl say the same).
 */
export function checkedEntry(written: string, reason: string | null | undefined, country = DEFAULT_COUNTRY) {
  const read = parseTypedNumber(written, country);
  if (!('e164' in read)) throw new AdminError(writtenNumberProblem(written.trim(), country));
  const stored = normalReason(reason);
  const reasonRefused = reasonProblem(stored);
  if (reasonRefused) throw new AdminError(reasonRefused);
  return { phoneNumber: read.e164, reason: stored };
}

/**
 * Ends the waiting calls (status initiated: for a slot, the window, the schedule or the next attempt) to `numbers`
 * that the list of `accountId` covers (its account's, an agency's clients', and for a client's those its agency's key
 * placed on the client's agents): failed, reason do_not_call, one call.failed each, through the lifecycle's transition
 * (events, counters, the outbox), a bounded batch per transaction. A call claimed for dialling meanwhile is found
 * dialling under its lock and left alone (the list is checked again before any further attempt). How many ended.
 * The caller has found the account within the actor's reach.
 */
export async function endWaitingCalls(
  storage: Storage,
  input: { accountId: string; numbers: string[]; actor: Actor; now: Date },
): Promise<number> {
  const ids = await storage.doNotCall.imports.waitingCallsTo(input.accountId, input.numbers);
  let ended = 0;
  for (let start = 0; start < ids.length; start += END_BATCH) {
    const applied = await transitionCalls(
      storage,
      { kind: 'ids', ids: ids.slice(start, start + END_BATCH) },
      (call) => (call.status === 'initiated' ? { update: { kind: 'failed', reason: 'do_not_call' } } : null),
      { now: input.now, source: input.actor.kind === 'user' ? 'dashboard' : input.actor.kind },
    );
    ended += applied.filter((a) => a.steps.length > 0).length;
  }
  return ended;
}

/**
 * Puts the number on the account's list (in E.164: `phoneNumber` may be written as people do, see checkedEntry) and
 * ends the waiting calls to it that the list covers. A number already on it keeps its entry (reason, who, when):
 * `added` is false and nothing is audited.
 */
export async function addToDoNotCall(
  storage: Storage,
  input: { accountId: string; phoneNumber: string; reason?: string | null | undefined; actor: Actor; now: Date },
) {
  const account = await findAccount(storage, input.accountId, input.actor);
  const { phoneNumber, reason } = checkedEntry(input.phoneNumber, input.reason, await accountCountry(storage, account));
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
  // After the commit: a trigger accepted from here on is refused, and the dispatcher's claim checks the list too.
  const ended = added
    ? await endWaitingCalls(storage, { accountId: account.id, numbers: [phoneNumber], actor: input.actor, now })
    : 0;
  return { account_id: account.id, added, ...entryView(entry), waiting_calls_ended: ended };
}

/** Takes the number off the account's list; `removed` false when it was not on it (nothing audited then). */
export async function removeFromDoNotCall(
  storage: Storage,
  input: { accountId: string; phoneNumber: string; actor: Actor; now: Date },
) {
  const account = await findAccount(storage, input.accountId, input.actor);
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
export async function listDoNotCall(storage: Storage, accountId: string, actor: Actor) {
  const account = await findAccount(storage, accountId, actor);
  const entries: ReturnType<typeof entryView>[] = [];
  for await (const batch of storage.doNotCall.eachEntry(account.id)) entries.push(...batch.map(entryView));
  return { account_id: account.id, covered_by_agency: account.agencyId, count: entries.length, entries };
}
