// Agencies, clients, plans, API keys and the API-access switch: what the dashboard manages, each on an account the
// actor reaches (reach.ts).
import { generateApiKey } from '../domain/api-key.js';
import { readableNameProblem } from '../../schemas/text.js';
import { type Storage, type Plan } from '../storage/index.js';
import { AdminError } from './errors.js';
import { audit, type Actor } from './audit.js';
import { findAccount } from './reach.js';

/**
 * callctl's actor: it reaches every account, and its changes are audited. (Without an actor, a change is not audited:
 * test fixtures, the bench; see scopeOfActor.)
 */
export const OPERATOR: Actor = { kind: 'operator' };

/**
 * Nothing changed: the form was made for a key or endpoint that is no longer the current one (it was sent already,
 * or someone else changed it meanwhile). What a reload of a page that showed a secret once gets.
 */
export class ChangedMeanwhile extends AdminError {
  override name = 'ChangedMeanwhile';
}

export const PLANS = ['agency', 'starter'] as const satisfies readonly Plan[];

export function isPlan(plan: string): plan is Plan {
  return (PLANS as readonly string[]).includes(plan);
}

export const unknownPlan = (plan: string) => `Unknown plan "${plan}" (expected ${PLANS.join(' or ')})`;

function assertPlan(plan: string): asserts plan is Plan {
  if (!isPlan(plan)) throw new AdminError(unknownPlan(plan));
}

export async function createAgency(storage: Storage, input: { name: string; plan?: string }) {
  const plan = input.plan ?? 'agency';
  assertPlan(plan);
  if (!input.name.trim()) throw new AdminError('An agency needs a name');
  const problem = readableNameProblem(input.name.trim());
  if (problem) throw new AdminError(`An agency's name ${problem}`);
  return storage.accounts.insertAgency({ name: input.name.trim(), plan });
}

/** Sets an agency's plan (callctl's; not audited). */
export async function setPlan(storage: Storage, agencyId: string, plan: string, actor: Actor) {
  assertPlan(plan);
  const account = await findAccount(storage, agencyId, actor);
  if (account.kind !== 'agency') throw new AdminError("Plans are set on agencies; clients inherit their agency's plan");
  await storage.accounts.setAccountPlan(account.id, plan);
  return { id: account.id, plan };
}

export const CLIENT_NAME_MAX_LENGTH = 200;

/**
 * A client of the agency (one the actor reaches: a client's user reaches no agency), audited as client_created when
 * an actor is given (callctl and the dashboard give one).
 */
export async function createClient(
  storage: Storage,
  input: { agencyId: string; name: string; now: Date },
  actor?: Actor,
) {
  const agency = await findAccount(storage, input.agencyId, actor);
  if (agency.kind !== 'agency') throw new AdminError(`${input.agencyId} is a client, not an agency`);
  const name = input.name.trim();
  if (!name) throw new AdminError('A client needs a name');
  if (name.length > CLIENT_NAME_MAX_LENGTH)
    throw new AdminError(`A client's name has at most ${CLIENT_NAME_MAX_LENGTH} characters`);
  const problem = readableNameProblem(name);
  if (problem) throw new AdminError(`A client's name ${problem}`);
  if (!actor) return storage.accounts.insertClient({ agencyId: agency.id, name });
  return storage.transaction(async (tx) => {
    const client = await tx.accounts.insertClient({ agencyId: agency.id, name });
    await audit(tx, client.id, actor, 'client_created', input.now, { client_id: client.id, name });
    return client;
  });
}

/**
 * Returns the new key once; the previous key stops working in the same transaction, which writes the audit entry
 * (when an actor is given).
 * With `replaces` (the id of the key the caller saw, null for none), only when that is still the active key; else
 * ChangedMeanwhile and nothing changes.
 */
export async function generateKey(
  storage: Storage,
  accountId: string,
  actor: Actor | undefined,
  options: { replaces?: string | null; now: Date },
) {
  const account = await findAccount(storage, accountId, actor);
  const generated = generateApiKey();
  const now = options.now;
  const rotated = await storage.transaction(async (tx) => {
    const result = await tx.keys.rotateApiKey(
      account.id,
      { digest: generated.digest, displayPrefix: generated.displayPrefix },
      now,
      options.replaces,
    );
    if (result && actor)
      await audit(tx, account.id, actor, 'key_generated', now, {
        prefix: generated.displayPrefix,
        previous_prefix: result.previousPrefix,
      });
    return result;
  });
  if (!rotated)
    throw new ChangedMeanwhile(
      `The API key of account ${account.id} changed since this was asked; no key was generated`,
    );
  return { key: generated.key, prefix: generated.displayPrefix };
}

/** The account's own switch, audited when an actor is given; an agency's also covers its clients' keys (the lookup reads both). */
export async function setApiAccess(
  storage: Storage,
  accountId: string,
  enabled: boolean,
  actor: Actor | undefined,
  now: Date,
) {
  const account = await findAccount(storage, accountId, actor);
  await storage.transaction(async (tx) => {
    await tx.keys.setApiAccessSwitch(account.id, enabled, now);
    if (actor) await audit(tx, account.id, actor, 'api_access_switched', now, { api_access: enabled ? 'on' : 'off' });
  });
  return { id: account.id, api_access: enabled ? 'on' : 'off' };
}
