// The dashboard's reads of call history: a page of the calls of the accounts a viewer manages (newest first, keyset on
// (created_at, id), filtered: call-history-list.ts, and its searches: call-history-search.ts), and one call with its
// events and its webhook deliveries and their attempts (call-history-detail.ts, Prisma Client) beside the list's
// per-call extras (call-history-extras.ts). Read-only; the list's statements are hand-written for their plans.
import type { Call } from '../generated/prisma/client.js';
import type { CallStatus, FailureReason } from '../../schemas/vocabulary.js';
import type { Scope } from '../domain/tenancy.js';
import { CallDetailReads } from './call-history-detail.js';
import { CallExtras } from './call-history-extras.js';
import { CallList } from './call-history-list.js';
import { CallsExport, type ExportOwners } from './calls-export.js';
import type { PoolDriver } from './driver.js';

export type { CallDetail } from './call-history-detail.js';
export {
  SEARCH_CANDIDATES_MAX,
  SEARCH_NAMES_MAX,
  SEARCH_PROBE_ACCOUNTS,
  SEARCH_PROBE_ROWS,
} from './call-history-search-statements.js';

/** Which calls: every filter that is not null must hold. */
export interface CallHistoryFilters {
  status: CallStatus | null;
  agentId: string | null;
  /** Destination numbers that start with this (`+` and digits: "+1415"). */
  numberPrefix: string | null;
  /** Names that start with this, in any case. */
  namePrefix: string | null;
  /** One metadata key and its value: the call's metadata has the key with either of `values` (JSON values). */
  metadata: MetadataMatch | null;
  /** The runtime's outcome label, exactly (calls.outcome: read through its partial indexes). */
  outcome: string | null;
  /** Created at or after. */
  from: Date | null;
  /** Created before. */
  to: Date | null;
  /** Only the waiting calls the calling rules hold (held_by set): read through their partial index. */
  held: boolean;
}

/** No filter set: the whole list. Spread it and set the filters a request asks for. */
export const NO_CALL_FILTERS: Readonly<CallHistoryFilters> = {
  status: null,
  agentId: null,
  numberPrefix: null,
  namePrefix: null,
  metadata: null,
  outcome: null,
  from: null,
  to: null,
  held: false,
};

/** `crm_id = 123`: the key, and the JSON values that count as that value (a number-looking one as both). */
export interface MetadataMatch {
  key: string;
  values: [unknown] | [unknown, unknown];
}

/**
 * Whose calls a page lists: the accounts given, or an agency's whole scope (itself and every client), which the
 * walk reads from the accounts table rather than from a list of a thousand ids. With the accounts, `listedFor`: those
 * whose listed calls (an agency's key on their agents: calls.listed_for_account_id) are read besides (historyAccounts).
 */
export type HistoryAccounts = { accountIds: string[]; listedFor?: string[] } | { agencyId: string };

/**
 * Whose calls a Calls list of `scope` reads: the accounts given (null: the whole scope). The calls an agency's key
 * placed on its clients' agents are the agency's (account_id) and listed for the client: a list that reads the agency's
 * own calls has them already; one of clients alone (a client's scope, or an agency's choosing one client) reads the
 * calls listed for those clients too.
 */
export function historyAccounts(scope: Scope, accountIds: string[] | null): HistoryAccounts {
  if (!accountIds) return { agencyId: scope.accountId };
  const agencyIncluded = scope.kind === 'agency' && accountIds.includes(scope.accountId);
  return { accountIds, listedFor: agencyIncluded ? [] : accountIds };
}

/** Where a page starts: the call before which (newest first) the next page begins. */
export interface CallCursor {
  createdAt: Date;
  id: string;
}

/** A call as the list shows it. */
export interface CallListRow {
  id: string;
  accountId: string;
  agentId: string;
  phoneNumber: string;
  name: string | null;
  status: CallStatus;
  failureReason: FailureReason | null;
  durationSeconds: number | null;
  createdAt: Date;
  startedAt: Date | null;
  /** Why it waits, when it does: see format.ts's waitingWords. */
  notBefore: Date;
  nextAttemptAt: Date | null;
  scheduledAt: Date | null;
  attempt: number;
  /** The zone the call's window is read in (its local times). */
  timezone: string | null;
  /** How many attempts have ended (entries of attempt_outcomes). */
  attemptsEnded: number;
  /** The ended attempts as stored ([{ attempt, outcome, at }]), for the list's attempts line. */
  attemptOutcomes: unknown;
  answeredBy: Call['answeredBy'];
  timezoneSource: Call['timezoneSource'];
  /** The client the call is listed for besides its account (an agency's key on that client's agent), else null. */
  listedForAccountId: string | null;
  /** The runtime's outcome label of its result, null until it reports one (or when it gave none). */
  outcome: string | null;
  /** Why the calling rules hold it (calls.held_by), and then the last decision record's first reason. */
  heldBy: string | null;
  heldReason: string | null;
}

/** The Calls list's reads and one call's detail, each in its module. */
export class CallHistoryRepository {
  private readonly list: CallList;
  private readonly detail: CallDetailReads;
  private readonly extras: CallExtras;
  private readonly export: CallsExport;

  constructor(driver: PoolDriver) {
    this.export = new CallsExport(driver);
    this.list = new CallList(driver);
    this.detail = new CallDetailReads(driver);
    this.extras = new CallExtras(driver);
  }

  /** A page of the calls of `accounts`, newest first, and the next page's cursor (CallList.listCallHistory). */
  listCallHistory(query: Parameters<CallList['listCallHistory']>[0]) {
    return this.list.listCallHistory(query);
  }

  /** The call `callId` when it is in the scope of `accounts` and passes the filters, else none. */
  findCallInHistory(query: Parameters<CallList['findCallInHistory']>[0]) {
    return this.list.findCallInHistory(query);
  }

  /** The consent export: the calls of `owners` created in [from, to), oldest first, in batches (calls-export.ts). */
  eachCallForExport(owners: ExportOwners, from: Date, to: Date) {
    return this.export.eachCall(owners, from, to);
  }

  /** The value of one metadata key of each of the calls `ids` (absent keys left out), as JSON values. */
  metadataValues(ids: string[], key: string) {
    return this.extras.metadataValues(ids, key);
  }

  /** For each of the calls `ids`, its place in its account's line of waiting calls (1 is dialled next). */
  queuePositions(ids: string[], now: Date) {
    return this.extras.queuePositions(ids, now);
  }

  /** The first `limit` outcome labels the calls of `scope` have, in order (a client's: its own calls'). */
  outcomeLabels(scope: Scope, limit: number) {
    return this.extras.outcomeLabels(
      scope.kind === 'agency'
        ? { column: 'agency_id', id: scope.accountId }
        : { column: 'account_id', id: scope.accountId },
      limit,
    );
  }

  /** The runtime's result of the call as published (its JSON text) and whether the terminal event carried it. */
  findCallResult(callId: string) {
    return this.extras.resultText(callId);
  }

  /** One call with its account, agent, events (oldest first), deliveries and their attempts; null when none. */
  findCallDetail(callId: string) {
    return this.detail.findCallDetail(callId, this.extras.metadataText(callId), this.extras.resultText(callId));
  }
}
