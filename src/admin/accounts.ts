// Agencies, clients, plans, API keys and the API-access switch: what the dashboard manages.
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Plan } from '../generated/prisma/enums.js';
import { generateApiKey } from '../domain/api-key.js';
import { isUuid } from '../domain/ids.js';
import { AdminError } from './errors.js';

export const PLANS = ['agency', 'starter'] as const satisfies readonly Plan[];

function assertPlan(plan: string): asserts plan is Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw new AdminError(`Unknown plan "${plan}" (expected ${PLANS.join(' or ')})`);
}

export async function findAccount(prisma: PrismaClient, accountId: string) {
  const account = isUuid(accountId) ? await prisma.account.findUnique({ where: { id: accountId } }) : null;
  if (!account) throw new AdminError(`No account ${accountId}`);
  return account;
}

export async function createAgency(prisma: PrismaClient, input: { name: string; plan?: string }) {
  const plan = input.plan ?? 'agency';
  assertPlan(plan);
  if (!input.name.trim()) throw new AdminError('An agency needs a name');
  const agency = await prisma.account.create({ data: { kind: 'agency', name: input.name.trim(), plan } });
  return { id: agency.id };
}

export async function setPlan(prisma: PrismaClient, agencyId: string, plan: string) {
  assertPlan(plan);
  const account = await findAccount(prisma, agencyId);
  if (account.kind !== 'agency') throw new AdminError('Plans are set on agencies; clients inherit their agency\'s plan');
  await prisma.account.update({ where: { id: account.id }, data: { plan } });
  return { id: account.id, plan };
}

export async function createClient(prisma: PrismaClient, input: { agencyId: string; name: string }) {
  const agency = await findAccount(prisma, input.agencyId);
  if (agency.kind !== 'agency') throw new AdminError(`${input.agencyId} is a client, not an agency`);
  if (!input.name.trim()) throw new AdminError('A client needs a name');
  const client = await prisma.account.create({ data: { kind: 'client', name: input.name.trim(), agencyId: agency.id } });
  return { id: client.id };
}

/** Returns the new key once; the previous key stops working in the same transaction. */
export async function generateKey(prisma: PrismaClient, accountId: string) {
  const account = await findAccount(prisma, accountId);
  const generated = generateApiKey();
  await prisma.$transaction(async (tx) => {
    // Serialise rotations of one account so that exactly one key stays active.
    await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${account.id}::uuid FOR UPDATE`;
    await tx.apiKey.updateMany({ where: { accountId: account.id, revokedAt: null }, data: { revokedAt: new Date() } });
    await tx.apiKey.create({ data: { accountId: account.id, digest: new Uint8Array(generated.digest), displayPrefix: generated.displayPrefix } });
  });
  return { key: generated.key, prefix: generated.displayPrefix };
}

export async function setApiAccess(prisma: PrismaClient, accountId: string, enabled: boolean) {
  const account = await findAccount(prisma, accountId);
  await prisma.account.update({ where: { id: account.id }, data: { apiAccessEnabled: enabled } });
  return { id: account.id, api_access: enabled ? 'on' : 'off' };
}
