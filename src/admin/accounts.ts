// Agencies, clients, plans, API keys and the API-access switch: what the dashboard manages.
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Plan } from '../generated/prisma/enums.js';
import { generateApiKey } from '../domain/api-key.js';
import { isUuid } from '../domain/ids.js';
import { findAccountById, insertAgency, insertClient, replaceApiKey, setAccountApiAccess, setAccountPlan } from '../storage/accounts.js';
import { AdminError } from './errors.js';
import { audit, type Actor } from './users.js';

export const PLANS = ['agency', 'starter'] as const satisfies readonly Plan[];

export function isPlan(plan: string): plan is Plan {
  return (PLANS as readonly string[]).includes(plan);
}

export const unknownPlan = (plan: string) => `Unknown plan "${plan}" (expected ${PLANS.join(' or ')})`;

function assertPlan(plan: string): asserts plan is Plan {
  if (!isPlan(plan)) throw new AdminError(unknownPlan(plan));
}

export async function findAccount(prisma: PrismaClient, accountId: string) {
  const account = isUuid(accountId) ? await findAccountById(prisma, accountId) : null;
  if (!account) throw new AdminError(`No account ${accountId}`);
  return account;
}

export async function createAgency(prisma: PrismaClient, input: { name: string; plan?: string }) {
  const plan = input.plan ?? 'agency';
  assertPlan(plan);
  if (!input.name.trim()) throw new AdminError('An agency needs a name');
  return insertAgency(prisma, { name: input.name.trim(), plan });
}

export async function setPlan(prisma: PrismaClient, agencyId: string, plan: string) {
  assertPlan(plan);
  const account = await findAccount(prisma, agencyId);
  if (account.kind !== 'agency') throw new AdminError('Plans are set on agencies; clients inherit their agency\'s plan');
  await setAccountPlan(prisma, account.id, plan);
  return { id: account.id, plan };
}

export const CLIENT_NAME_MAX_LENGTH = 200;

/** A client of the agency, audited as client_created when an actor is given (callctl and the dashboard give one). */
export async function createClient(prisma: PrismaClient, input: { agencyId: string; name: string; now?: Date }, actor?: Actor) {
  const agency = await findAccount(prisma, input.agencyId);
  if (agency.kind !== 'agency') throw new AdminError(`${input.agencyId} is a client, not an agency`);
  const name = input.name.trim();
  if (!name) throw new AdminError('A client needs a name');
  if (name.length > CLIENT_NAME_MAX_LENGTH) throw new AdminError(`A client's name has at most ${CLIENT_NAME_MAX_LENGTH} characters`);
  if (!actor) return insertClient(prisma, { agencyId: agency.id, name });
  return prisma.$transaction(async (tx) => {
    const client = await insertClient(tx, { agencyId: agency.id, name });
    await audit(tx, client.id, actor, 'client_created', input.now ?? new Date(), { client_id: client.id, name });
    return client;
  });
}

/** Returns the new key once; the previous key stops working in the same transaction. */
export async function generateKey(prisma: PrismaClient, accountId: string) {
  const account = await findAccount(prisma, accountId);
  const generated = generateApiKey();
  await replaceApiKey(prisma, account.id, { digest: generated.digest, displayPrefix: generated.displayPrefix }, new Date());
  return { key: generated.key, prefix: generated.displayPrefix };
}

export async function setApiAccess(prisma: PrismaClient, accountId: string, enabled: boolean) {
  const account = await findAccount(prisma, accountId);
  await setAccountApiAccess(prisma, account.id, enabled);
  return { id: account.id, api_access: enabled ? 'on' : 'off' };
}
