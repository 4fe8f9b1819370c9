// The accounts, agents and api_keys tables as operators change them: agencies and clients, plans, API access, agents,
// the default agent, and replacing an account's key. Prisma Client, except the row lock of a key rotation. (The
// key lookup of every request is storage/keys.ts.)
import type { Account, Agent, Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { OutsideWindowPolicy, Plan } from '../generated/prisma/enums.js';
import { statement } from './statements.js';

export async function findAccountById(prisma: PrismaClient, accountId: string): Promise<Account | null> {
  return prisma.account.findUnique({ where: { id: accountId } });
}

export async function insertAgency(prisma: PrismaClient, agency: { name: string; plan: Plan }): Promise<{ id: string }> {
  return prisma.account.create({ data: { kind: 'agency', name: agency.name, plan: agency.plan }, select: { id: true } });
}

export async function insertClient(db: PrismaClient | Prisma.TransactionClient, client: { agencyId: string; name: string }): Promise<{ id: string }> {
  return db.account.create({ data: { kind: 'client', name: client.name, agencyId: client.agencyId }, select: { id: true } });
}

export async function setAccountPlan(prisma: PrismaClient, accountId: string, plan: Plan): Promise<void> {
  await prisma.account.update({ where: { id: accountId }, data: { plan } });
}

export async function setAccountApiAccess(prisma: PrismaClient, accountId: string, enabled: boolean): Promise<void> {
  await prisma.account.update({ where: { id: accountId }, data: { apiAccessEnabled: enabled } });
}

export async function setAccountDefaultAgent(prisma: PrismaClient, accountId: string, agentId: string): Promise<void> {
  await prisma.account.update({ where: { id: accountId }, data: { defaultAgentId: agentId } });
}

// Hand-written: a row lock (SELECT ... FOR UPDATE), which Prisma Client cannot express.
const LOCK_ACCOUNT = statement('oct_lock_account', 'SELECT id FROM accounts WHERE id = $1::uuid FOR UPDATE');

/**
 * Revokes the account's active key and stores a new one (its digest only), in one transaction: rotations of one
 * account are serialised on its row, so that exactly one key stays active.
 */
export async function replaceApiKey(prisma: PrismaClient, accountId: string, key: { digest: Uint8Array; displayPrefix: string }, now: Date): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await tx.$queryRawUnsafe(LOCK_ACCOUNT.text, accountId);
    await tx.apiKey.updateMany({ where: { accountId, revokedAt: null }, data: { revokedAt: now } });
    await tx.apiKey.create({ data: { accountId, digest: new Uint8Array(key.digest), displayPrefix: key.displayPrefix } });
  });
}

export interface NewAgent {
  accountId: string;
  agencyId: string;
  name: string;
  phoneNumber: string | null;
  timezone: string;
  callingWindows: Prisma.InputJsonValue;
  outsideWindowPolicy: OutsideWindowPolicy;
}

export async function insertAgent(prisma: PrismaClient, agent: NewAgent): Promise<{ id: string }> {
  return prisma.agent.create({ data: agent, select: { id: true } });
}

export async function findAgentById(prisma: PrismaClient, agentId: string): Promise<Agent | null> {
  return prisma.agent.findUnique({ where: { id: agentId } });
}

/** A client as the Clients page lists it. */
export interface ClientSummary {
  id: string;
  name: string;
  createdAt: Date;
  apiAccessEnabled: boolean;
  /** The active API key's display prefix; null when the client has none. */
  keyPrefix: string | null;
  webhookSet: boolean;
  /** Users who are not disabled. */
  activeUsers: number;
}

const CLIENT_SUMMARY = {
  id: true,
  name: true,
  createdAt: true,
  apiAccessEnabled: true,
  apiKeys: { where: { revokedAt: null }, select: { displayPrefix: true }, orderBy: { createdAt: 'desc' }, take: 1 },
  webhookEndpoint: { select: { id: true } },
  _count: { select: { users: { where: { disabledAt: null } } } },
} satisfies Prisma.AccountSelect;

function clientSummary(row: Prisma.AccountGetPayload<{ select: typeof CLIENT_SUMMARY }>): ClientSummary {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.createdAt,
    apiAccessEnabled: row.apiAccessEnabled,
    keyPrefix: row.apiKeys[0]?.displayPrefix ?? null,
    webhookSet: row.webhookEndpoint !== null,
    activeUsers: row._count.users,
  };
}

/** An agency's clients by name (the Clients page). */
export async function listClients(prisma: PrismaClient, agencyId: string): Promise<ClientSummary[]> {
  const rows = await prisma.account.findMany({ where: { agencyId, kind: 'client' }, orderBy: [{ name: 'asc' }, { id: 'asc' }], select: CLIENT_SUMMARY });
  return rows.map(clientSummary);
}

/** One client with its agency's name and plan (a client inherits it), or null when `clientId` is not a client. */
export async function findClientSummary(prisma: PrismaClient, clientId: string): Promise<(ClientSummary & { agencyName: string; plan: Plan | null }) | null> {
  const row = await prisma.account.findFirst({
    where: { id: clientId, kind: 'client' },
    select: { ...CLIENT_SUMMARY, agency: { select: { name: true, plan: true } } },
  });
  return row && { ...clientSummary(row), agencyName: row.agency?.name ?? '', plan: row.agency?.plan ?? null };
}

/** The ids and names of an agency's clients by name (whom an agency user can invite people to). */
export async function listClientNames(prisma: PrismaClient, agencyId: string): Promise<{ id: string; name: string }[]> {
  return prisma.account.findMany({ where: { agencyId, kind: 'client' }, orderBy: [{ name: 'asc' }, { id: 'asc' }], select: { id: true, name: true } });
}
