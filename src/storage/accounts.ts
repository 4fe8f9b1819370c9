// The accounts and agents tables as operators change them and the dashboard lists them: agencies and clients, plans,
// agents. Prisma Client throughout. (Keys, the API-access switch and the default agent, changed inside the audited
// transactions of src/admin, are storage/keys.ts; the key lookup of every request is storage/key-lookup.ts.)
import type { Account, Agent, Prisma } from '../generated/prisma/client.js';
import type { OutsideWindowPolicy, Plan } from '../generated/prisma/enums.js';
import { governingPlan } from '../domain/api-access.js';
import { PrismaRepository } from './driver.js';
import { startsWithInAnyCase } from './like.js';
import { readPage, type ListPage, type PageWanted } from './paging.js';

export interface NewAgent {
  accountId: string;
  agencyId: string;
  name: string;
  phoneNumber: string | null;
  timezone: string;
  callingWindows: Prisma.InputJsonValue;
  outsideWindowPolicy: OutsideWindowPolicy;
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

export class AccountRepository extends PrismaRepository {
  async findAccountById(accountId: string): Promise<Account | null> {
    return this.prisma.account.findUnique({ where: { id: accountId } });
  }

  async insertAgency(agency: { name: string; plan: Plan }): Promise<{ id: string }> {
    return this.prisma.account.create({
      data: { kind: 'agency', name: agency.name, plan: agency.plan },
      select: { id: true },
    });
  }

  async insertClient(client: { agencyId: string; name: string }): Promise<{ id: string }> {
    return this.prisma.account.create({
      data: { kind: 'client', name: client.name, agencyId: client.agencyId },
      select: { id: true },
    });
  }

  /** The account and its agency (itself for an agency), as an audit entry records them; null when there is none. */
  async findAccountAndAgency(accountId: string): Promise<{ accountId: string; agencyId: string } | null> {
    const account = await this.prisma.account.findUnique({
      where: { id: accountId },
      select: { id: true, agencyId: true },
    });
    return account && { accountId: account.id, agencyId: account.agencyId ?? account.id };
  }

  /** Deletes an account that nothing points at yet (an agency whose first user could not be made). */
  async deleteAccount(accountId: string): Promise<void> {
    await this.prisma.account.delete({ where: { id: accountId } });
  }

  async setAccountPlan(accountId: string, plan: Plan): Promise<void> {
    await this.prisma.account.update({ where: { id: accountId }, data: { plan } });
  }

  async findAgentById(agentId: string): Promise<Agent | null> {
    return this.prisma.agent.findUnique({ where: { id: agentId } });
  }

  /**
   * The names of an agency's clients whose own API access is on, by name, at most `limit`, and how many there are
   * (switching the agency's access off names those it stops; an agency may have thousands).
   */
  async clientsWithApiAccess(agencyId: string, limit: number): Promise<{ names: string[]; total: number }> {
    const where = { agencyId, kind: 'client', apiAccessEnabled: true } as const;
    const [rows, total] = await Promise.all([
      this.prisma.account.findMany({
        where,
        orderBy: [{ name: 'asc' }, { id: 'asc' }],
        select: { name: true },
        take: limit,
      }),
      this.prisma.account.count({ where }),
    ]);
    return { names: rows.map((r) => r.name), total };
  }

  /**
   * A page of an agency's clients by name, then id (the Clients page): those whose name starts with `name` in any
   * case (% and _ as themselves) when it is not null.
   */
  async listClientsPage(agencyId: string, name: string | null, wanted: PageWanted): Promise<ListPage<ClientSummary>> {
    const where: Prisma.AccountWhereInput = { agencyId, kind: 'client' };
    if (name) where.name = startsWithInAnyCase(name);
    return readPage(
      wanted,
      () => this.prisma.account.count({ where }),
      async (range) =>
        (
          await this.prisma.account.findMany({
            where,
            orderBy: [{ name: 'asc' }, { id: 'asc' }],
            select: CLIENT_SUMMARY,
            ...range,
          })
        ).map(clientSummary),
    );
  }

  /**
   * The account's calling-rules settings as stored (accounts.calling_rules; null: none), its row locked until the
   * caller's transaction ends, so that two changes of the settings are serialised (neither loses the other's).
   */
  async lockCallingRules(accountId: string): Promise<{ callingRules: unknown } | null> {
    // Hand-written: a row lock (SELECT ... FOR UPDATE), which Prisma Client cannot express.
    const [row] = await this.prisma.$queryRaw<{ calling_rules: unknown }[]>`
      SELECT calling_rules FROM accounts WHERE id = ${accountId}::uuid FOR UPDATE`;
    return row ? { callingRules: row.calling_rules } : null;
  }

  /** The agency's clients that have calling rules of their own, their rows locked (see lockCallingRules). */
  async lockClientsCallingRules(agencyId: string): Promise<{ id: string; callingRules: unknown }[]> {
    const rows = await this.prisma.$queryRaw<{ id: string; calling_rules: unknown }[]>`
      SELECT id, calling_rules FROM accounts
      WHERE agency_id = ${agencyId}::uuid AND kind = 'client' AND calling_rules IS NOT NULL
      ORDER BY id FOR UPDATE`;
    return rows.map((row) => ({ id: row.id, callingRules: row.calling_rules }));
  }

  async setCallingRules(accountId: string, callingRules: Prisma.InputJsonValue): Promise<void> {
    await this.prisma.account.update({ where: { id: accountId }, data: { callingRules } });
  }

  /**
   * The waiting calls of an agency and its clients that the calling rules hold (calls.held_by), released: no longer
   * held, due as soon as they may be dialled, as AgentRepository.rescheduleWaitingCalls makes an edited agent's calls
   * (now, or their scheduled time or next attempt when later; the dispatcher still applies their agents' windows).
   * Through the held calls' index.
   */
  async releaseHeldCalls(agencyId: string, now: Date): Promise<number> {
    // Hand-written: each row's new not_before comes from its own columns, which updateMany cannot set.
    return this.prisma.$executeRaw`
      UPDATE calls
         SET held_by = NULL, not_before = GREATEST(${now}::timestamptz, scheduled_at, next_attempt_at),
             updated_at = ${now}::timestamptz
       WHERE agency_id = ${agencyId}::uuid AND status = 'initiated' AND held_by IS NOT NULL`;
  }

  /** One client with its agency's name and plan (a client inherits it), or null when `clientId` is not a client. */
  async findClientSummary(
    clientId: string,
  ): Promise<(ClientSummary & { agencyName: string; plan: Plan | null }) | null> {
    const row = await this.prisma.account.findFirst({
      where: { id: clientId, kind: 'client' },
      select: { ...CLIENT_SUMMARY, plan: true, agency: { select: { name: true, plan: true } } },
    });
    return (
      row && {
        ...clientSummary(row),
        agencyName: row.agency?.name ?? '',
        plan: governingPlan(row.plan, row.agency?.plan ?? null),
      }
    );
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
