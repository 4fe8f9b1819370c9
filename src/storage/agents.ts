// The agents table as the dashboard and callctl change it: writing an agent (inside the caller's transaction, next to
// its audit entry), listing a page of the agents a person manages, and handing an edited agent's waiting calls
// back to the dispatcher, archiving and restoring; the caller IDs an account's country is read from. Prisma Client,
// and one row lock in SQL. (The trigger's agent lookup is storage/accounts.ts findAgentById.)
import type { Prisma } from '../generated/prisma/client.js';
import type { HandoffKind, OutsideWindowPolicy, VoicemailPolicy, WindowTimezone } from '../generated/prisma/enums.js';
import { PrismaRepository } from './driver.js';
import { readPage, type ListPage, type PageWanted } from './paging.js';

/** What an edit may change; the owning account and agency never change (calls and defaults point at the agent). */
export interface AgentFields {
  name: string;
  phoneNumber: string | null;
  timezone: string;
  callingWindows: Prisma.InputJsonValue;
  outsideWindowPolicy: OutsideWindowPolicy;
  windowTimezone: WindowTimezone;
  maxAttempts: number;
  /** A subset of RETRYABLE_OUTCOMES, in its order. */
  retryOn: Prisma.InputJsonValue;
  /** Minutes before attempt 2, 3, ...; the last repeats. */
  retryWaitsMinutes: Prisma.InputJsonValue;
  voicemail: VoicemailPolicy;
  voicemailMessage: string | null;
  /** How an answered call reaches the voice-agent runtime: the stream, or the SIP destination. */
  handoff: HandoffKind;
  /** The stream's wss:// address; null: the service's AGENT_STREAM_URL. */
  streamUrl: string | null;
  /** [{ name, value }] in order. */
  streamParameters: Prisma.InputJsonValue;
  sipUri: string | null;
  /** [{ name, value }] in order. */
  sipHeaders: Prisma.InputJsonValue;
  /** Triggers for the agent must carry a consent record. */
  consentRequired: boolean;
}

/** A new agent: its account and agency, and its fields. */
export type NewAgentRow = { accountId: string; agencyId: string } & AgentFields;

const LISTED_AGENT = {
  id: true,
  accountId: true,
  name: true,
  phoneNumber: true,
  timezone: true,
  callingWindows: true,
  outsideWindowPolicy: true,
  windowTimezone: true,
  maxAttempts: true,
  retryOn: true,
  retryWaitsMinutes: true,
  voicemail: true,
  voicemailMessage: true,
  handoff: true,
  streamUrl: true,
  streamParameters: true,
  sipUri: true,
  sipHeaders: true,
  consentRequired: true,
  archivedAt: true,
  createdAt: true,
  updatedAt: true,
  account: { select: { name: true, kind: true } },
  defaultFor: { select: { id: true, name: true, agencyId: true }, orderBy: { name: 'asc' } },
} satisfies Prisma.AgentSelect;

/** An agent with its account's name and the accounts it is the default agent of. */
export type ListedAgent = Prisma.AgentGetPayload<{ select: typeof LISTED_AGENT }>;

export class AgentRepository extends PrismaRepository {
  async insertAgentRow(agent: NewAgentRow): Promise<{ id: string }> {
    return this.prisma.agent.create({ data: agent, select: { id: true } });
  }

  async updateAgentRow(agentId: string, fields: AgentFields, now: Date): Promise<void> {
    await this.prisma.agent.update({ where: { id: agentId }, data: { ...fields, updatedAt: now } });
  }

  /**
   * An edited agent's calls waiting for its old calling window become due as soon as they may be dialled: now, or
   * their scheduled time or next attempt when that is later. The dispatcher reads the agent's windows again when it
   * claims them and dials them, or sets them to wait for the new window's next opening. Returns how many there were.
   */
  async rescheduleWaitingCalls(agentId: string, now: Date): Promise<number> {
    // Hand-written: each row's new not_before comes from its own columns, which updateMany cannot set.
    return this.prisma.$executeRaw`
      UPDATE calls
         SET not_before = GREATEST(${now}::timestamptz, scheduled_at, next_attempt_at), updated_at = ${now}::timestamptz
       WHERE agent_id = ${agentId}::uuid AND status = 'initiated'
         AND not_before > GREATEST(${now}::timestamptz, scheduled_at, next_attempt_at)`;
  }

  /**
   * Locks the agent's row until the caller's transaction ends, so that archiving it and making it a default agent are
   * serialised (neither sees the other half done); its archive time, or null when there is no such agent.
   */
  async lockAgent(agentId: string): Promise<{ archivedAt: Date | null } | null> {
    // Hand-written: a row lock (SELECT ... FOR UPDATE), which Prisma Client cannot express.
    const [row] = await this.prisma.$queryRaw<{ archived_at: Date | null }[]>`
      SELECT archived_at FROM agents WHERE id = ${agentId}::uuid FOR UPDATE`;
    return row ? { archivedAt: row.archived_at } : null;
  }

  /** The accounts whose default agent this is, by name (read after lockAgent: a statement of its own sees them all). */
  async accountsDefaultingTo(agentId: string): Promise<{ id: string; name: string }[]> {
    return this.prisma.account.findMany({
      where: { defaultAgentId: agentId },
      orderBy: [{ name: 'asc' }, { id: 'asc' }],
      select: { id: true, name: true },
    });
  }

  /** Archives the agent (`at`) or restores it (null). */
  async setAgentArchivedAt(agentId: string, at: Date | null, now: Date): Promise<void> {
    await this.prisma.agent.update({ where: { id: agentId }, data: { archivedAt: at, updatedAt: now } });
  }

  /** A page of the agents `where` picks, by name, then id (the Agents page). */
  async listAgentsPage(where: Prisma.AgentWhereInput, wanted: PageWanted): Promise<ListPage<ListedAgent>> {
    return readPage(
      wanted,
      () => this.prisma.agent.count({ where }),
      (range) =>
        this.prisma.agent.findMany({
          where,
          orderBy: [{ name: 'asc' }, { id: 'asc' }],
          select: LISTED_AGENT,
          ...range,
        }),
    );
  }

  /** One agent as the edit page shows it, or null. */
  async findListedAgent(agentId: string): Promise<ListedAgent | null> {
    return this.prisma.agent.findUnique({ where: { id: agentId }, select: LISTED_AGENT });
  }

  /**
   * The caller IDs of the agents in use (not archived, with a number) of `account`, an agency's with its clients',
   * the oldest first, at most `limit`: what the account's country is read from (src/admin/account-country.ts).
   */
  async callerIdsOf(account: { id: string; agencyId: string | null }, limit: number): Promise<string[]> {
    const agents = await this.prisma.agent.findMany({
      where: {
        ...(account.agencyId === null ? { agencyId: account.id } : { accountId: account.id }),
        archivedAt: null,
        phoneNumber: { not: null },
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit,
      select: { phoneNumber: true },
    });
    return agents.map((a) => a.phoneNumber!);
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
