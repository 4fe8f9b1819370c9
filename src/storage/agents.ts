// The agents table as the dashboard and callctl change it: writing an agent (inside the caller's transaction, next to
// its audit entry), listing the agents of the accounts a person manages, and handing an edited agent's waiting calls
// back to the dispatcher. Prisma Client only. (The trigger's agent lookup is storage/accounts.ts findAgentById.)
import type { Prisma } from '../generated/prisma/client.js';
import type { OutsideWindowPolicy } from '../generated/prisma/enums.js';
import type { NewAgent } from './accounts.js';
import type { Db } from './db-types.js';

export async function insertAgentRow(db: Db, agent: NewAgent): Promise<{ id: string }> {
  return db.agent.create({ data: agent, select: { id: true } });
}

/** What an edit may change; the owning account and agency never change (calls and defaults point at the agent). */
export interface AgentFields {
  name: string;
  phoneNumber: string | null;
  timezone: string;
  callingWindows: Prisma.InputJsonValue;
  outsideWindowPolicy: OutsideWindowPolicy;
}

export async function updateAgentRow(db: Db, agentId: string, fields: AgentFields, now: Date): Promise<void> {
  await db.agent.update({ where: { id: agentId }, data: { ...fields, updatedAt: now } });
}

/**
 * An edited agent's calls waiting for its old calling window become due now: the dispatcher reads the agent's
 * windows again when it claims them and dials them, or sets them to wait for the new window's next opening.
 * Returns how many there were.
 */
export async function rescheduleWaitingCalls(db: Db, agentId: string, now: Date): Promise<number> {
  const { count } = await db.call.updateMany({
    where: { agentId, status: 'initiated', notBefore: { gt: now } },
    data: { notBefore: now },
  });
  return count;
}

const LISTED_AGENT = {
  id: true,
  accountId: true,
  name: true,
  phoneNumber: true,
  timezone: true,
  callingWindows: true,
  outsideWindowPolicy: true,
  createdAt: true,
  updatedAt: true,
  account: { select: { name: true, kind: true } },
  defaultFor: { select: { id: true, name: true }, orderBy: { name: 'asc' } },
} satisfies Prisma.AgentSelect;

/** An agent with its account's name and the accounts it is the default agent of. */
export type ListedAgent = Prisma.AgentGetPayload<{ select: typeof LISTED_AGENT }>;

/** The agents owned by the given accounts, by name (the Agents page). */
export async function listAgentsOfAccounts(db: Db, accountIds: string[]): Promise<ListedAgent[]> {
  return db.agent.findMany({
    where: { accountId: { in: accountIds } },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
    select: LISTED_AGENT,
  });
}

/** One agent as the edit page shows it, or null. */
export async function findListedAgent(db: Db, agentId: string): Promise<ListedAgent | null> {
  return db.agent.findUnique({ where: { id: agentId }, select: LISTED_AGENT });
}
