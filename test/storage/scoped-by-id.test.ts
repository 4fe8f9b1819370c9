// The dashboard's reads of accounts and agents by id (the Calls list's row names, the filters' ids) read by key and
// keep what the viewer's scope holds: an agency sees itself and its clients, a client itself alone; another agency,
// its clients and ids of nothing come back absent, whatever else the same list of ids names.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import type { Storage } from '../../src/storage/index.js';
import { freshPrisma, storageOf } from '../helpers/database.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';

let prisma: PrismaClient;
let storage: Storage;
let agency: Tenant;
let client: Tenant;
let sibling: Tenant;
let other: Tenant;
let othersClient: Tenant;
/** An agent the agency owns that its client's calls may use. */
let agencyShared: string;

beforeAll(async () => {
  ({ prisma } = await freshPrisma());
  storage = storageOf(prisma);
  agency = await createTenant(prisma);
  client = await createClientTenant(prisma, agency.accountId);
  sibling = await createClientTenant(prisma, agency.accountId);
  other = await createTenant(prisma);
  othersClient = await createClientTenant(prisma, other.accountId);
  agencyShared = (
    await createAgent(storage, { accountId: agency.accountId, name: 'Shared', phone: '+14155550199', now: new Date() })
  ).id;
});

afterAll(async () => {
  await prisma?.$disconnect();
});

const sorted = (ids: string[]) => [...ids].sort();
/** Every account and every agent of the two agencies, asked for in one list whatever the scope. */
const everyAccount = () => [
  agency.accountId,
  client.accountId,
  sibling.accountId,
  other.accountId,
  othersClient.accountId,
];
const everyAgent = () => [
  agency.agentId,
  agencyShared,
  client.agentId,
  sibling.agentId,
  other.agentId,
  othersClient.agentId,
];

describe('accounts and agents read by id within a scope', () => {
  it('an agency finds itself and its clients, never another agency or its clients, nor ids of nothing', async () => {
    const scope = { accountId: agency.accountId, kind: 'agency' } as const;
    const accounts = await storage.scoped.findAccountsInScope(scope, [
      ...everyAccount(),
      randomUUID(),
      client.accountId,
    ]);
    expect(sorted(accounts.map((a) => a.id))).toEqual(sorted([agency.accountId, client.accountId, sibling.accountId]));
    const own = accounts.find((a) => a.id === agency.accountId)!;
    expect(own).toEqual({ id: agency.accountId, name: 'Test Agency', kind: 'agency' });
    expect(accounts.find((a) => a.id === client.accountId)).toEqual({
      id: client.accountId,
      name: 'Test Client',
      kind: 'client',
    });

    const agents = await storage.scoped.findAgentsInScope(scope, [...everyAgent(), randomUUID()]);
    expect(sorted(agents.map((a) => a.id))).toEqual(
      sorted([agency.agentId, agencyShared, client.agentId, sibling.agentId]),
    );
    expect(agents.find((a) => a.id === client.agentId)).toMatchObject({
      accountId: client.accountId,
      accountName: 'Test Client',
      name: 'Test Agent',
    });
  });

  it('a client finds itself alone: not its agency, a sibling or another tenant', async () => {
    const scope = { accountId: client.accountId, kind: 'client' } as const;
    const accounts = await storage.scoped.findAccountsInScope(scope, everyAccount());
    expect(accounts.map((a) => a.id)).toEqual([client.accountId]);
    const agents = await storage.scoped.findAgentsInScope(scope, everyAgent());
    expect(agents.map((a) => a.id)).toEqual([client.agentId]);
  });

  it('reads agents and accounts in one call, each list kept to the scope', async () => {
    const scope = { accountId: client.accountId, kind: 'client' } as const;
    const found = await storage.scoped.findInScopeById(scope, {
      agentIds: [client.agentId, agencyShared, othersClient.agentId],
      accountIds: [client.accountId, agency.accountId, other.accountId],
    });
    expect(found.agents.map((a) => a.id)).toEqual([client.agentId]);
    expect(found.accounts).toEqual([{ id: client.accountId, name: 'Test Client', kind: 'client' }]);
    expect(await storage.scoped.findInScopeById(scope, { agentIds: [], accountIds: [] })).toEqual({
      agents: [],
      accounts: [],
    });
  });

  it('answers an empty list of ids with none, and only another tenant’s ids with none', async () => {
    const scope = { accountId: agency.accountId, kind: 'agency' } as const;
    expect(await storage.scoped.findAccountsInScope(scope, [])).toEqual([]);
    expect(await storage.scoped.findAccountsInScope(scope, [other.accountId, othersClient.accountId])).toEqual([]);
    expect(await storage.scoped.findAgentsInScope(scope, [other.agentId])).toEqual([]);
  });
});
