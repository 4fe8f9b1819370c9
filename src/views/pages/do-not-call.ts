// The do-not-call page's model: what src/views/pages/do-not-call.eta reads (with the partials it includes).
// What the Do-not-call list page and a call's detail view show of the lists: the page's model (a page of the list,
// its search, the other lists an agency user manages) and a call's number on its account's and its agency's lists.
import type { KeysOf, Problem, SectionAccount } from './model-parts.js';
import type { FastifyRequest } from 'fastify';
import { accountCountry } from '../../admin/account-country.js';
import { DASHBOARD_IMPORT_MAX_BYTES, parseSearch, REASON_MAX_LENGTH } from '../../domain/do-not-call.js';
import type { ImportProblem } from '../../domain/do-not-call-csv.js';
import type { ImportMode } from '../../../schemas/dashboard/do-not-call.js';
import { isAgencyScope, scopeOf } from '../../domain/tenancy.js';
import type { AccountInScope, ActiveUser, CallDetail, DoNotCallEntry } from '../../storage/index.js';
import type { CallDoNotCall } from './call.js';
import type { PageData } from '../page-models.js';

export type DoNotCallModel = {
  account: SectionAccount;
  /** The list's page: /dashboard/do-not-call or a client's. */
  base: string;
  /** A client's list: the agency whose own list covers the client too; null for an agency's list. */
  agencyName: string | null;
  /** An agency user's lists (the agency's, then each client's), the one shown marked; empty for a client user. */
  lists: { name: string; href: string; current: boolean }[];
  search: string;
  /** What the search looks for, in words; null without one. */
  searching: string | null;
  /** How many numbers are on the list, in words (capped: a list may hold millions). */
  count: string;
  entries: { phoneNumber: string; reason: string | null; addedBy: string; addedAt: string }[];
  nextHref: string | null;
  firstHref: string | null;
  exportHref: string;
  add: { phoneNumber: string; reason: string; problem: Problem };
  /** An import refused, or done without its bad rows: a title, its problems (the first ones), how many more. */
  importRefused: {
    title: string;
    error: boolean;
    problems: { line: string; message: string }[];
    more: number;
  } | null;
  /** The import form's choice for bad rows: all (import nothing) or good_rows. */
  importMode: string;
  /** `country`: where a number written without a plus is read (the account's, see docs/dashboard.md). */
  limits: { reasonMax: number; importMax: string; country: string };
};

/** The fields do-not-call.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const DO_NOT_CALL_FIELDS = [
  'account',
  'base',
  'agencyName',
  'lists',
  'search',
  'searching',
  'count',
  'entries',
  'nextHref',
  'firstHref',
  'exportHref',
  'add',
  'importRefused',
  'importMode',
  'limits',
] as const satisfies readonly KeysOf<DoNotCallModel>[];

export const PAGE_SIZE = 50;
/** The page counts a list's numbers up to here ("more than 10,000"): counting a million-number list takes long. */
const COUNT_CAP = 10_000;
/** A refused import shows this many of its problems. */
const PROBLEMS_SHOWN = 100;

/** The two places a list is managed: the viewer's own account's, and (agency users) a client's. */
export interface ListPlace {
  prefix: string;
  managed: 'own' | 'client';
  param?: string;
  base(accountId: string): string;
}

export const OWN_LIST: ListPlace = {
  prefix: '/do-not-call',
  managed: 'own',
  base: () => '/dashboard/do-not-call',
};

export const CLIENT_LIST: ListPlace = {
  prefix: '/clients/:id/do-not-call',
  // Only a client of the viewer's agency: the agency's own id is no client (404, like any other).
  managed: 'client',
  param: 'id',
  base: (accountId) => `/dashboard/clients/${accountId}/do-not-call`,
};

/** The list page of `accountId` as `viewer` reaches it: their own, or (an agency user) a client's. */
export function listBase(viewer: ActiveUser, accountId: string): string {
  return accountId === viewer.accountId ? OWN_LIST.base(accountId) : CLIENT_LIST.base(accountId);
}

const numbers = (n: number) => (n === 1 ? '1 number' : `${n.toLocaleString('en-US')} numbers`);

function countWords(count: number): string {
  return count > COUNT_CAP ? `More than ${numbers(COUNT_CAP)}` : count === 0 ? 'No numbers' : numbers(count);
}

export interface PageInput {
  query?: { q?: string | undefined; after?: string | undefined } | undefined;
  add?: { phoneNumber: string; reason: string; problem: string | null };
  /** Which choice the import form shows selected for bad rows. */
  importMode?: ImportMode;
  /** An import refused (`refused`: nothing imported) or done without its bad rows (`partly`), and its problems. */
  importRefused?:
    | { kind: 'refused'; problems: ImportProblem[]; badRows: number }
    | { kind: 'partly'; problems: ImportProblem[]; badRows: number; added: number };
}

/** What the import's notice says above its problems. */
function importTitle(result: NonNullable<PageInput['importRefused']>): string {
  if (result.kind === 'refused') return 'Nothing was imported:';
  const rows = (n: number) => `${n.toLocaleString('en-US')} rows`;
  const numbers = result.added === 1 ? '1 number' : `${result.added.toLocaleString('en-US')} numbers`;
  const left = result.badRows === 1 ? 'this row was' : `these ${rows(result.badRows)} were`;
  return `Imported ${numbers}; ${left} left out (fix them and import them again):`;
}

/** The model of one page of `account`'s list. */
export async function listPage(
  request: FastifyRequest,
  account: AccountInScope,
  input: PageInput,
): Promise<PageData<'do-not-call'>> {
  const viewer = request.user;
  const base = listBase(viewer, account.id);
  const searchText = input.query?.q?.trim() ?? '';
  const search = parseSearch(searchText);
  const after = input.query?.after?.trim() || undefined;
  const [page, count, accounts, country] = await Promise.all([
    request.scoped.doNotCallEntries(account, { search, after, limit: PAGE_SIZE }),
    request.scoped.countDoNotCall(account, null, COUNT_CAP + 1),
    isAgencyScope(request.scope) ? request.scoped.listAccountsInScope() : Promise.resolve([]),
    request.admin.run(accountCountry, account),
  ]);
  const agency = await request.scoped.agency(account);
  const link = (extra: Record<string, string>) => {
    const params = new URLSearchParams({ ...(searchText ? { q: searchText } : {}), ...extra }).toString();
    return `${base}${params ? `?${params}` : ''}`;
  };
  const result = input.importRefused ?? null;
  return {
    title: account.id === viewer.accountId ? 'Do-not-call list' : `Do-not-call list of ${account.name}`,
    account: { id: account.id, name: account.name, kind: account.kind },
    base,
    agencyName: agency?.name ?? null,
    lists: accounts.map((a) => ({
      name: a.id === viewer.accountId ? `${a.name} (agency: covers every client)` : a.name,
      href: listBase(viewer, a.id),
      current: a.id === account.id,
    })),
    search: searchText,
    searching:
      search === null
        ? null
        : search.kind === 'prefix'
          ? `numbers beginning with ${search.prefix}`
          : `reasons containing "${search.text}"`,
    count: countWords(count),
    entries: page.entries.map((e: DoNotCallEntry) => ({
      phoneNumber: e.phoneNumber,
      reason: e.reason,
      addedBy: e.addedBy,
      addedAt: request.times.time(e.addedAt),
    })),
    nextHref: page.next ? link({ after: page.next }) : null,
    firstHref: after ? link({}) : null,
    exportHref: `${base}/export.csv`,
    add: input.add ?? { phoneNumber: '', reason: '', problem: null },
    importRefused: result && {
      title: importTitle(result),
      error: result.kind === 'refused',
      problems: result.problems.slice(0, PROBLEMS_SHOWN).map((p) => ({
        line: p.line > 0 ? `Line ${p.line}` : 'The file',
        message: p.message,
      })),
      more: Math.max(0, result.badRows - Math.min(PROBLEMS_SHOWN, result.problems.length)),
    },
    importMode: input.importMode ?? 'all',
    limits: {
      reasonMax: REASON_MAX_LENGTH,
      importMax: `${DASHBOARD_IMPORT_MAX_BYTES / 1024 / 1024} MiB`,
      country,
    },
  };
}

/**
 * The call's number on the do-not-call lists that cover it: its account's and (a client's call) its agency's. "Add
 * this number" puts it on the call's account's list, which the viewer manages (they see the call).
 */
export async function callDoNotCall(request: FastifyRequest, call: CallDetail): Promise<CallDoNotCall> {
  const viewer = request.user;
  // A call an agency's key placed on a client's agent is listed for the client: the client's list and its agency's.
  const account = call.listedFor ?? call.account;
  const entries = await request.scoped.doNotCallOfNumber(account, call.phoneNumber);
  const own = entries.find((e) => e.accountId === account.id) ?? entries[0];
  const ownList = account.kind === 'client' ? `the list of ${account.name}` : "the agency's list";
  if (!own)
    return {
      listed: null,
      addAction: `${listBase(viewer, account.id)}/add`,
      listName: ownList,
      listHref: listBase(viewer, account.id),
    };
  const onOwn = own.accountId === account.id;
  const list = onOwn ? ownList : "the agency's list (it covers all its clients)";
  // A client user does not manage the agency's list: they learn that it covers the number, not who listed it or why.
  const manages = onOwn || isAgencyScope(scopeOf(viewer));
  const reason = own.reason ? `: ${own.reason}` : '';
  return {
    listed: manages
      ? `On ${list} since ${request.times.time(own.addedAt)}, added by ${own.addedBy}${reason}`
      : `On ${list}`,
    addAction: null,
    listName: list,
    listHref: manages ? listBase(viewer, own.accountId) : null,
  };
}
