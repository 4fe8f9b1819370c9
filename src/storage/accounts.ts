// The accounts and agents tables as operators change them and the dashboard lists them: agencies and clients, plans,
// agents. Prisma Client throughout. (Keys, the API-access switch and the default agent, changed inside the audited
// transactions of src/admin, are storage/keys.ts; the key lookup of every request too.)
import type { Account, Agent, Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { OutsideWindowPolicy, Plan } from '../generated/prisma/enums.js';

export async function findAccountById(prisma: PrismaClient, accountId: string): Promise<Account | null> {
  return prisma.account.findUnique({ where: { id: accountId } });
}

export async function insertAgency(
  prisma: PrismaClient,
  agency: { name: string; plan: Plan },
): Promise<{ id: string }> {
  return prisma.account.create({
    data: { kind: 'agency', name: agency.name, plan: agency.plan },
    select: { id: true },
  });
}

export async function insertClient(
  db: PrismaClient | Prisma.TransactionClient,
  client: { agencyId: string; name: string },
): Promise<{ id: string }> {
  return db.account.create({
    data: { kind: 'client', name: client.name, agencyId: client.agencyId },
    select: { id: true },
  });
}

export async function setAccountPlan(prisma: PrismaClient, accountId: string, plan: Plan): Promise<void> {
  await prisma.account.update({ where: { id: accountId }, data: { plan } });
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
  const rows = await prisma.account.findMany({
    where: { agencyId, kind: 'client' },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
    select: CLIENT_SUMMARY,
  });
  return rows.map(clientSummary);
}

/** One client with its agency's name and plan (a client inherits it), or null when `clientId` is not a client. */
export async function findClientSummary(
  prisma: PrismaClient,
  clientId: string,
): Promise<(ClientSummary & { agencyName: string; plan: Plan | null }) | null> {
  const row = await prisma.account.findFirst({
    where: { id: clientId, kind: 'client' },
    select: { ...CLIENT_SUMMARY, agency: { select: { name: true, plan: true } } },
  });
  return row && { ...clientSummary(row), agencyName: row.agency?.name ?? '', plan: row.agency?.plan ?? null };
}

/** The ids and names of an agency's clients by name (whom an agency user can invite people to). */
export async function listClientNames(prisma: PrismaClient, agencyId: string): Promise<{ id: string; name: string }[]> {
  return prisma.account.findMany({
    where: { agencyId, kind: 'client' },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
    select: { id: true, name: true },
  });
}
