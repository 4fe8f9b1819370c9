// Tenants for tests, made through the same operator functions callctl uses.
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import type { Storage } from '../../src/storage/index.js';
import { storageOf } from './database.js';
import { createAgency, createClient, generateKey, setApiAccess, setPlan } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent, updateAgent, type AgentInput } from '../../src/admin/agents.js';

export interface Tenant {
  accountId: string;
  key: string;
  agentId: string;
}

export interface TenantOptions {
  /** The account's name (default 'Test Agency', or 'Test Client'). */
  name?: string;
  /** The agent's name (default 'Test Agent'). */
  agentName?: string;
  plan?: 'agency' | 'starter';
  phone?: string | null;
  timezone?: string;
  windows?: string[];
  outsideWindow?: 'queue' | 'reject';
  defaultAgent?: boolean;
  apiAccess?: boolean;
}

/**
 * `key` with the character at `at` (default: the last) replaced by another, always a different one: a key that fails
 * its checksum (or, in the checksum itself, matches no key).
 */
export function keyWithTypo(key: string, at = key.length - 1): string {
  return key.slice(0, at) + (key[at] === 'a' ? 'b' : 'a') + key.slice(at + 1);
}

/** An agency with a key and one agent (with a phone number, set as default unless told otherwise). */
export async function createTenant(prisma: Storage | PrismaClient, options: TenantOptions = {}): Promise<Tenant> {
  const { id: accountId } = await createAgency(storageOf(prisma), {
    name: options.name ?? 'Test Agency',
    plan: options.plan ?? 'agency',
  });
  return completeTenant(storageOf(prisma), accountId, options);
}

/** A client of `agencyId` with a key and one agent. */
export async function createClientTenant(
  prisma: Storage | PrismaClient,
  agencyId: string,
  options: TenantOptions = {},
): Promise<Tenant> {
  const { id: accountId } = await createClient(storageOf(prisma), {
    agencyId,
    name: options.name ?? 'Test Client',
    now: new Date(),
  });
  return completeTenant(storageOf(prisma), accountId, options);
}

async function completeTenant(prisma: Storage, accountId: string, options: TenantOptions): Promise<Tenant> {
  const { id: agentId } = await createAgent(prisma, {
    accountId,
    name: options.agentName ?? 'Test Agent',
    phone: options.phone === null ? undefined : (options.phone ?? '+14155550100'),
    timezone: options.timezone,
    windows: options.windows,
    outsideWindow: options.outsideWindow,
    now: new Date(),
  });
  if (options.defaultAgent !== false) await setDefaultAgent(prisma, accountId, agentId, undefined, new Date());
  if (options.apiAccess === false) await setApiAccess(prisma, accountId, false, undefined, new Date());
  const { key } = await generateKey(prisma, accountId, undefined, { now: new Date() });
  return { accountId, key, agentId };
}

export { setPlan, setApiAccess, generateKey };

/** Changes the settings `input` names, as callctl's `agent update` does (audited as the operator's). */
export async function updateAgentSettings(storage: Storage, agentId: string, input: AgentInput): Promise<void> {
  await updateAgent(storage, agentId, { ...input, now: new Date() }, { kind: 'operator' });
}

/** Makes `agentId` the default agent of `accountId`, as callctl's `agent default` does (not audited). */
export async function makeDefaultAgent(storage: Storage, accountId: string, agentId: string): Promise<void> {
  await setDefaultAgent(storage, accountId, agentId, undefined, new Date());
}

/** An agent of `accountId` (made on first use per account), for rows a test writes in bulk (test/helpers/seed.ts). */
const agents = new Map<string, Promise<string>>();
export function agentOf(prisma: Storage | PrismaClient, accountId: string): Promise<string> {
  if (!agents.has(accountId))
    agents.set(
      accountId,
      createAgent(storageOf(prisma), { accountId, name: 'Fixture Agent', phone: '+14155550100', now: new Date() }).then(
        (a) => a.id,
      ),
    );
  return agents.get(accountId)!;
}

/** The Calls list's filters with none set: the service's own (spread it and set the ones a test asks). */
export { NO_CALL_FILTERS } from '../../src/storage/index.js';
