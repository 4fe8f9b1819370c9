// The dashboard's reads, bound to the viewer's scope: `request.scoped` offers the scoped reads of
// src/storage/dashboard-scope.ts with `request.scope` already given, and the reads of an account (its key, endpoint,
// do-not-call list...) only for an account that was resolved in scope. Dashboard routes read through it alone
// (eslint.config.js forbids `fastify.storage` there), so a handler cannot read outside the viewer's scope.
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Scope } from '../../src/domain/tenancy.js';
import {
  historyAccounts,
  noOutcomes,
  type AccountInScope,
  type CallListRow,
  type Storage,
  type TodaySoFar,
} from '../../src/storage/index.js';

type ScopedRepository = Storage['scoped'];
/** The names of the scoped reads that take the viewer's scope first. */
const SCOPE_BOUND = [
  'listAccountsInScope',
  'listAccountsInScopeUpTo',
  'findAccountsInScope',
  'findAccountsInScopeByName',
  'findAccountInScope',
  'findClientInScope',
  'listClientsInScope',
  'listAgentsInScope',
  'findAgentsInScope',
  'findInScopeById',
  'findAgentsInScopeByName',
  'listListedAgentsInScope',
  'findAgentInScope',
  'findUserInScope',
  'findCallInScope',
  'findCallsInScope',
  'listAuditInScope',
] as const satisfies readonly (keyof ScopedRepository)[];
type ScopeBound = (typeof SCOPE_BOUND)[number];
type WithoutScope<F> = F extends (scope: Scope, ...args: infer A) => infer R ? (...args: A) => R : never;
type Rest<F> = F extends (first: never, ...args: infer A) => unknown ? A : never;

/** An account the viewer may see: one a scoped read or `request.managed()` gave. */
type Managed = Pick<AccountInScope, 'id'>;

function accountReads(storage: Storage, request: FastifyRequest) {
  return {
    /** The account's own agents (the default agent's choices). */
    ownAgents: (account: Managed, ...args: Rest<ScopedRepository['listOwnAgents']>) =>
      storage.scoped.listOwnAgents(account.id, ...args),
    apiAccess: (account: Managed) => storage.keys.findApiAccessState(account.id),
    activeKey: (account: Managed) => storage.keys.findActiveKey(account.id),
    endpoint: (account: Managed) => storage.endpoints.findEndpointOfAccount(account.id),
    /** An agent the account's API access names as its default. */
    defaultAgent: async (access: { defaultAgentId: string | null } | null) =>
      access?.defaultAgentId ? storage.accounts.findAgentById(access.defaultAgentId) : null,
    openDeliveries: (endpoint: { id: string }) => storage.deliveries.countOpenDeliveries(endpoint.id),
    endpointDeliveries: (endpoint: { id: string }, ...args: Rest<Storage['deliveries']['listEndpointDeliveries']>) =>
      storage.deliveries.listEndpointDeliveries(endpoint.id, ...args),
    clientsWithApiAccess: (agency: Managed, max: number) => storage.accounts.clientsWithApiAccess(agency.id, max),
    clientSummary: (client: Managed) => storage.accounts.findClientSummary(client.id),
    /** The agency above an account (or above the viewer: `request.user.agencyId`). */
    agency: (account: { agencyId: string | null }) =>
      account.agencyId ? storage.accounts.findAccountById(account.agencyId) : Promise.resolve(null),
    doNotCallEntries: (account: Managed, ...args: Rest<Storage['doNotCall']['listEntries']>) =>
      storage.doNotCall.listEntries(account.id, ...args),
    countDoNotCall: (account: Managed, ...args: Rest<Storage['doNotCall']['countEntries']>) =>
      storage.doNotCall.countEntries(account.id, ...args),
    /** The entries of the number on the account's list and on its agency's. */
    doNotCallOfNumber: (account: Managed & { agencyId: string | null }, phoneNumber: string) =>
      storage.doNotCall.findEntries(account.agencyId ? [account.id, account.agencyId] : [account.id], phoneNumber),
    eachDoNotCall: (account: Managed) => storage.doNotCall.eachEntry(account.id),
    /** The users of accounts a scoped read gave. */
    usersOf: (accounts: Managed[]) => storage.users.listUsers(accounts.map((a) => a.id)),
    /** The viewer's own row, and the metadata key they show as a column on the Calls list. */
    viewerRow: () => storage.users.findUserById(request.user.id),
    callsColumn: () => storage.users.callsMetadataColumnOf(request.user.id),
    saveCallsColumn: (key: string | null) => storage.users.setCallsMetadataColumn(request.user.id, key),
    /** The Calls list of the scope (`accountIds` of it, or null: the whole scope). */
    callHistory: (
      accountIds: string[] | null,
      page: Omit<Parameters<Storage['history']['listCallHistory']>[0], 'accountIds' | 'listedFor' | 'agencyId'>,
    ) => storage.history.listCallHistory({ ...historyAccounts(request.scope, accountIds), ...page }),
    callInHistory: (
      accountIds: string[] | null,
      found: Omit<Parameters<Storage['history']['findCallInHistory']>[0], 'accountIds' | 'listedFor' | 'agencyId'>,
    ) => storage.history.findCallInHistory({ ...historyAccounts(request.scope, accountIds), ...found }),
    /** The consent export: the scope's calls created in [from, to), oldest first, in batches. */
    eachCallForExport: (from: Date, to: Date) =>
      storage.history.eachCallForExport(
        historyAccounts(request.scope, request.scope.kind === 'agency' ? null : [request.scope.accountId]),
        from,
        to,
      ),
    /** The outcome labels the scope's calls have, for the Outcome filter's suggestions (the first `limit`). */
    outcomeLabels: (limit: number) => storage.history.outcomeLabels(request.scope, limit),
    metadataValues: (calls: CallListRow[], key: string) =>
      storage.history.metadataValues(
        calls.map((c) => c.id),
        key,
      ),
    queuePositions: (calls: CallListRow[], now: Date) =>
      storage.history.queuePositions(
        calls.map((c) => c.id),
        now,
      ),
    /** The Overview: the accounts of the scope ranked, its first-run state, and what the day held for `accounts`. */
    rankedAccounts: (...args: Rest<Storage['overview']['rankedAccounts']>) =>
      storage.overview.rankedAccounts(request.scope, ...args),
    firstRun: () => storage.overview.firstRun(request.scope),
    heldCalls: () => storage.overview.heldCalls(request.scope),
    /** The chart: the scope's calls per UTC day from `first` to `last` (YYYY-MM-DD) by outcome, from the counters. */
    outcomesByDay: (first: string, last: string) => storage.overview.outcomesByDay(request.scope, first, last),
    /** Every account's outcomes of `today` so far, in the viewer's zone (none: all zero). */
    outcomesOfDay: async (accounts: { id: string }[], today: TodaySoFar) => {
      const found = await storage.overview.outcomesOfDay(
        accounts.map((a) => a.id),
        today,
      );
      return new Map(accounts.map((a) => [a.id, found.get(a.id) ?? noOutcomes()]));
    },
    endpointHealth: (accounts: { id: string }[], since: Date) =>
      storage.overview.endpointHealth(
        accounts.map((a) => a.id),
        since,
      ),
  };
}

export type ScopedReads = { [K in ScopeBound]: WithoutScope<ScopedRepository[K]> } & ReturnType<typeof accountReads>;

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard's reads, in the viewer's scope: only on the routes of the signed-in family (throws elsewhere). */
    readonly scoped: ScopedReads;
  }
}

const kScoped = Symbol('dashboard scoped reads');

function scopedReads(storage: Storage, request: FastifyRequest): ScopedReads {
  const bound = Object.fromEntries(
    SCOPE_BOUND.map((name) => [
      name,
      (...args: unknown[]) =>
        (storage.scoped[name] as (scope: Scope, ...rest: unknown[]) => unknown).call(
          storage.scoped,
          request.scope,
          ...args,
        ),
    ]),
  ) as { [K in ScopeBound]: WithoutScope<ScopedRepository[K]> };
  return { ...bound, ...accountReads(storage, request) };
}

export default fp(
  async (fastify: FastifyInstance) => {
    fastify.decorateRequest('scoped', {
      getter(this: FastifyRequest & { [kScoped]?: ScopedReads }): ScopedReads {
        // `request.scope` throws outside the signed-in family: so does the first read.
        return (this[kScoped] ??= scopedReads(fastify.storage, this));
      },
    });
  },
  { name: 'dashboard-scoped', fastify: '5.x', dependencies: ['db', 'dashboard-tenancy'] },
);
