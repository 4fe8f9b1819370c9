// The dashboard's reads, each taking the viewer's Scope (src/domain/tenancy.ts): the accounts, agents, users, calls
// and audit entries a viewer may see. An object outside the scope is read as absent (null), so a page answers 404
// for another tenant's object exactly as for a missing one. The scope's rule is `inScope`; `accountsWhere` and
// `ownedWhere` (scope-where.ts) are that rule as a query. Prisma Client, beside the two statements of
// dashboard-scope-rows.ts on the pool: in Storage only, never in a transaction's type.
import { canonicalUuid, isUuid } from '../../schemas/uuid.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { CallStatus } from '../generated/prisma/enums.js';
import { inScope, type Scope } from '../domain/tenancy.js';
import { AccountRepository, type ClientSummary } from './accounts.js';
import { AgentRepository, type ListedAgent } from './agents.js';
import { startsWithInAnyCase } from './like.js';
import type { ListPage, PageWanted } from './paging.js';
import { AuditRepository, type AuditCursor } from './audit.js';
import { CallHistoryRepository, type CallDetail } from './call-history.js';
import { PrismaRepository, type PoolDriver } from './driver.js';
import {
  ACCOUNT_SELECT,
  AGENT_SELECT,
  scopeAgent,
  ScopeStatements,
  wholeNameFirst,
  type ScopeAccount,
  type ScopeAgent,
} from './dashboard-scope-rows.js';
import { accountsWhere, clientsWhere, ownedWhere } from './scope-where.js';
import { UserRepository } from './users.js';

export type { ScopeAccount, ScopeAgent } from './dashboard-scope-rows.js';

/** The dashboard's reads, each within a viewer's scope. */
export class ScopedReadRepository extends PrismaRepository {
  private readonly accounts: AccountRepository;
  private readonly agents: AgentRepository;
  private readonly audit: AuditRepository;
  private readonly history: CallHistoryRepository;
  private readonly users: UserRepository;
  private readonly statements: ScopeStatements;

  constructor(driver: PoolDriver) {
    super(driver);
    this.accounts = new AccountRepository(driver);
    this.agents = new AgentRepository(driver);
    this.audit = new AuditRepository(driver);
    this.history = new CallHistoryRepository(driver);
    this.users = new UserRepository(driver);
    this.statements = new ScopeStatements(driver);
  }

  /** The accounts of `scope`, its own first, then the clients by name. */
  async listAccountsInScope(scope: Scope): Promise<ScopeAccount[]> {
    return this.accountsInScopeByName(scope);
  }

  /**
   * The accounts of `scope` as listAccountsInScope orders them when there are at most `max`, else null: a page that
   * offers them as a menu asks for at most that many rather than read an agency of thousands of clients.
   */
  async listAccountsInScopeUpTo(scope: Scope, max: number): Promise<ScopeAccount[] | null> {
    const accounts = await this.accountsInScopeByName(scope, max + 1);
    return accounts.length > max ? null : accounts;
  }

  /**
   * The accounts of `scope`, its own first, then its clients by name, at most `take` in all. The clients are read on
   * their own, in the order of (agency_id, name, id): asked for as the scope's rule (its own id or its agency's),
   * PostgreSQL reads every client of the agency and sorts them, a thousand rows for the few a menu shows.
   */
  private async accountsInScopeByName(scope: Scope, take?: number): Promise<ScopeAccount[]> {
    const clientsOf = clientsWhere(scope);
    const [own, clients] = await Promise.all([
      this.prisma.account.findUnique({ where: { id: scope.accountId }, select: ACCOUNT_SELECT }),
      !clientsOf || (take !== undefined && take < 2)
        ? []
        : this.prisma.account.findMany({
            where: clientsOf,
            select: ACCOUNT_SELECT,
            orderBy: [{ name: 'asc' }, { id: 'asc' }],
            ...(take === undefined ? {} : { take: take - 1 }),
          }),
    ]);
    return [...(own ? [own] : []), ...clients];
  }

  /** The accounts of `scope` among `ids` (others' and missing ones left out). */
  async findAccountsInScope(scope: Scope, ids: string[]): Promise<ScopeAccount[]> {
    return (await this.findInScopeById(scope, { agentIds: [], accountIds: ids })).accounts;
  }

  /** The accounts of `scope` whose name starts with `text` in any case, by name (wholeNameFirst), at most `limit`. */
  async findAccountsInScopeByName(scope: Scope, text: string, limit: number): Promise<ScopeAccount[]> {
    return wholeNameFirst(text, limit, (name) =>
      this.prisma.account.findMany({
        where: { AND: [accountsWhere(scope), { name }] },
        select: ACCOUNT_SELECT,
        orderBy: [{ name: 'asc' }, { id: 'asc' }],
        take: limit,
      }),
    );
  }

  /** The account `accountId` when it is in `scope` (not an id, no such account, another tenant's: null). */
  async findAccountInScope(scope: Scope, accountId: string) {
    const account = isUuid(accountId)
      ? await this.prisma.account.findUnique({
          where: { id: canonicalUuid(accountId) },
          select: { id: true, kind: true, name: true, agencyId: true, plan: true, apiAccessEnabled: true },
        })
      : null;
    return account && inScope(scope, account) ? account : null;
  }

  /** A client of `scope` (an agency's): null for the agency itself, for another tenant's and for a missing one. */
  async findClientInScope(scope: Scope, accountId: string): Promise<AccountInScope | null> {
    const account = await this.findAccountInScope(scope, accountId);
    return account?.kind === 'client' ? account : null;
  }

  /**
   * A page of the clients of `scope` with what the Clients page shows, by name (none for a client's scope): those
   * whose name starts with `name` in any case when it is not null.
   */
  async listClientsInScope(scope: Scope, name: string | null, wanted: PageWanted): Promise<ListPage<ClientSummary>> {
    return scope.kind === 'agency'
      ? this.accounts.listClientsPage(scope.accountId, name, wanted)
      : { rows: [], total: 0, page: 1, size: wanted.size };
  }

  /**
   * The agents of `scope`'s accounts by name (every agent their calls can use), with their owner's name, at most
   * `limit`; `onlyUsable` leaves out archived ones (menus that pick an agent for new calls). One statement that reads
   * the agents in the order of (agency_id, name, id) and each one's owner by its key: Prisma reads the owners
   * separately, by a list of ids that PostgreSQL, past a few dozen, answers by reading every tenant's account.
   */
  async listAgentsInScope(scope: Scope, limit?: number, { onlyUsable = false } = {}): Promise<ScopeAgent[]> {
    return this.statements.agentsByName(scope.kind, scope.accountId, onlyUsable, limit ?? null);
  }

  /**
   * The account's own agents by name (not its clients'), at most `limit`: those that can be its default agent
   * (`onlyUsable` leaves out archived ones). The statement of a client's scope, whose agents are its own.
   */
  async listOwnAgents(accountId: string, limit: number, { onlyUsable = false } = {}): Promise<ScopeAgent[]> {
    return this.statements.agentsByName('client', accountId, onlyUsable, limit);
  }

  /** The agents of `scope` among `ids`, with their owner's name (others' and missing ones left out). */
  async findAgentsInScope(scope: Scope, ids: string[]): Promise<ScopeAgent[]> {
    return (await this.findInScopeById(scope, { agentIds: ids, accountIds: [] })).agents;
  }

  /**
   * The agents (with their owner's name) and the accounts of `scope` among the ids given, in one statement; others'
   * and missing ones left out. Read by their keys, then kept when in scope (as findAccountInScope does): asked for as
   * "the scope's agents among these ids", a prepared statement's generic plan reads all of a large agency's agents by
   * (agency_id) to find a page's few. The Calls list of an agency with more clients and agents than its menus list
   * names its rows with it: the two reads it made before (the accounts through Prisma) were the whole of what made
   * its pages slower than a small agency's, which takes the names from its menus
   * (docs/performance.md#a-large-agencys-row-names).
   */
  async findInScopeById(
    scope: Scope,
    ids: { agentIds: string[]; accountIds: string[] },
  ): Promise<{ agents: ScopeAgent[]; accounts: ScopeAccount[] }> {
    const found: { agents: ScopeAgent[]; accounts: ScopeAccount[] } = { agents: [], accounts: [] };
    if (ids.agentIds.length === 0 && ids.accountIds.length === 0) return found;
    const rows = await this.statements.byId([...new Set(ids.agentIds)], [...new Set(ids.accountIds)]);
    for (const { row, agencyId, kind, ...r } of rows) {
      if (!inScope(scope, { id: r.accountId, agencyId })) continue;
      if (row === 'account') found.accounts.push({ id: r.id, name: r.name, kind: kind! });
      else found.agents.push({ ...r, maxAttempts: r.maxAttempts! });
    }
    return found;
  }

  /**
   * The agents of `accountIds` (accounts of `scope`; null: all of them) whose name starts with `text` in any case, by
   * name (wholeNameFirst), at most `limit`.
   */
  async findAgentsInScopeByName(scope: Scope, accountIds: string[] | null, text: string, limit: number) {
    const owners = accountIds ? { AND: [ownedWhere(scope), { accountId: { in: accountIds } }] } : ownedWhere(scope);
    const agents = await wholeNameFirst(text, limit, (name) =>
      this.prisma.agent.findMany({
        where: { AND: [owners, { name }] },
        select: AGENT_SELECT,
        // Agents of several clients often share a name: then by their owner's.
        orderBy: [{ name: 'asc' }, { account: { name: 'asc' } }, { id: 'asc' }],
        take: limit,
      }),
    );
    return agents.map(scopeAgent);
  }

  /**
   * A page of the agents of `scope`'s accounts as the Agents page lists them, by name: those in use, or the archived
   * ones; whose name starts with `name` in any case when it is not null. An agent's `defaultFor` names its own account
   * at most (an account's default agent is one of its own).
   */
  async listListedAgentsInScope(
    scope: Scope,
    list: { archived: boolean; name: string | null },
    wanted: PageWanted,
  ): Promise<ListPage<ListedAgent>> {
    const where: Prisma.AgentWhereInput[] = [ownedWhere(scope), { archivedAt: list.archived ? { not: null } : null }];
    if (list.name) where.push({ name: startsWithInAnyCase(list.name) });
    return this.agents.listAgentsPage({ AND: where }, wanted);
  }

  /** The agent `agentId` when its owner is in `scope`, else null. */
  async findAgentInScope(scope: Scope, agentId: string): Promise<ListedAgent | null> {
    const agent = isUuid(agentId) ? await this.agents.findListedAgent(agentId) : null;
    if (!agent) return null;
    return (await this.findAccountInScope(scope, agent.accountId)) ? agent : null;
  }

  /** The user `userId` and their account when it is in `scope`, else null. */
  async findUserInScope(scope: Scope, userId: string) {
    const user = isUuid(userId) ? await this.users.findUserById(userId) : null;
    if (!user) return null;
    const account = await this.findAccountInScope(scope, user.accountId);
    return account && { user, account };
  }

  /**
   * The call `callId` with its detail when its account is in `scope`, or the client it is listed for (an agency's key
   * on that client's agent), else null.
   */
  async findCallInScope(scope: Scope, callId: string): Promise<CallDetail | null> {
    const call = isUuid(callId) ? await this.history.findCallDetail(canonicalUuid(callId)) : null;
    if (!call) return null;
    return inScope(scope, call.account) || (call.listedFor !== null && inScope(scope, call.listedFor)) ? call : null;
  }

  /**
   * Of the calls `callIds`, those whose account is in `scope` or that are listed for an account of it (ids that are
   * not uuids, missing calls, others': left out).
   */
  async findCallsInScope(scope: Scope, callIds: string[]): Promise<{ id: string; status: CallStatus }[]> {
    const ids = [...new Set(callIds.filter(isUuid).map(canonicalUuid))];
    if (ids.length === 0) return [];
    // An agency's listed calls are its own (account_id): only a client's scope has others listed for it.
    const listed: Prisma.CallWhereInput[] = scope.kind === 'client' ? [{ listedForAccountId: scope.accountId }] : [];
    return this.prisma.call.findMany({
      where: { id: { in: ids }, OR: [{ account: accountsWhere(scope) }, ...listed] },
      select: { id: true, status: true },
    });
  }

  /** One page of the audit log of `scope`'s accounts, newest first. */
  async listAuditInScope(scope: Scope, page: { before?: AuditCursor; limit: number }) {
    return this.audit.listAuditEntries(ownedWhere(scope), page);
  }
}

export type AccountInScope = NonNullable<Awaited<ReturnType<ScopedReadRepository['findAccountInScope']>>>;
export type UserInScope = NonNullable<Awaited<ReturnType<ScopedReadRepository['findUserInScope']>>>;
