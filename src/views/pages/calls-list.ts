// The Calls list's page: the calls of the viewer's scope, newest first, filtered, 50 a page (keyset: "Older"
// carries the last call's time and id).
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import type { FastifyRequest } from 'fastify';
import { unknownStatus } from '../../admin/calls.js';
import { CALL_STATUSES, type CallStatus } from '../../../schemas/vocabulary.js';
import { METADATA_KEY_MAX } from '../../../schemas/trigger.js';
import { isAgencyScope } from '../../domain/tenancy.js';
import { CallsQuery } from '../../../schemas/dashboard/calls.js';
import { canonicalUuid } from '../../../schemas/uuid.js';
import { NO_CALL_FILTERS, type ActiveUser, type CallCursor, type CallListRow } from '../../storage/index.js';
import type { CallHistoryFilters, ScopeAgent } from '../../storage/index.js';
import { attemptsCell, callBadge, hasActiveCall, metadataCellWords, waitsForSlot } from '../format/badge.js';
import { storedOutcomes } from '../format/badge.js';
import { STATUS_WORDS } from '../format/status.js';
import { decodeCursor, encodeCursor } from '../format/cursor.js';
import { formatDuration } from '../format/time.js';
import { attemptsDialled } from '../../calls/call-view.js';
import type { PageData } from '../page-models.js';
import {
  chooseFrom,
  dateFilter,
  exportForm,
  FILTER_MENU_MAX,
  heldFilter,
  metadataValues,
  outcomeFilter,
  OUTCOME_SUGGESTIONS,
  typedFilters,
  type FilterChoice,
} from './calls-filters.js';

const PAGE_SIZE = 50;
/** The start of a phone number once separators are dropped: `+` (may be left out) and 1 to 15 digits. */
const NUMBER_PREFIX = /^\+?(\d{1,15})$/;
type Viewer = ActiveUser;

/** The Calls list's page for `query` (400 when a filter is refused, each problem said), read in the viewer's scope. */
export async function callsListPage(
  request: FastifyRequest,
  query: CallsQuery | undefined,
): Promise<{ status: number; model: PageData<'calls'> }> {
  const viewer: Viewer = request.user;
  const scoped = request.scoped;
  const scope = request.scope;
  const now = request.admin.now();
  const isAgency = isAgencyScope(scope);
  // An agency of a few accounts and agents chooses them from menus; one of thousands types their names, and the page
  // reads only the accounts and agents its filters and rows name.
  const [accountMenu, agentList, column, outcomes] = await Promise.all([
    scoped.listAccountsInScopeUpTo(FILTER_MENU_MAX),
    scoped.listAgentsInScope(FILTER_MENU_MAX + 1),
    scoped.callsColumn(),
    scoped.outcomeLabels(OUTCOME_SUGGESTIONS),
  ]);
  const agentMenu = agentList.length > FILTER_MENU_MAX ? null : agentList;
  // The route's validation stops at the first filter it refuses; the schema's own errors name every one of them.
  const errors = request.validationError ? [...Value.Errors(CallsQuery, query ?? {})] : [];
  const refused = new Set(errors.map((error) => error.path.split('/')[1]));
  const unreadable =
    errors.length === 0
      ? Boolean(request.validationError)
      : errors.some((e) => e.type !== ValueErrorType.StringPattern);
  const typed = unreadable ? {} : typedFilters(query);
  // No schema error, yet refused: a filter holds what PostgreSQL cannot take as text (NUL, half a surrogate pair).
  const problems: string[] = unreadable
    ? [
        errors.length === 0
          ? 'A filter holds a character that cannot be searched for (NUL, or half of a character). Clear the filters and try again.'
          : 'A filter is longer than any value it can have. Clear the filters and try again.',
      ]
    : [];

  const filters: CallHistoryFilters = { ...NO_CALL_FILTERS };
  if (typed.status) {
    // One of CALL_STATUSES, as the schema's pattern says.
    if (!refused.has('status')) filters.status = typed.status as CallStatus;
    else problems.push(`${unknownStatus(typed.status)}.`);
  }
  const cleared = (name: 'agent_name' | 'client_name') => !unreadable && query?.[name] !== undefined && !typed[name];
  const own = (accountId: string) => isAgency && accountId === viewer.accountId;
  const accountLabel = (a: { id: string; name: string }) => (own(a.id) ? `Own calls (${a.name})` : a.name);
  const client = await chooseFrom(
    { one: 'client', many: 'clients' },
    {
      id: typed.client,
      idRefused: refused.has('client'),
      name: typed.client_name,
      nameCleared: cleared('client_name'),
    },
    {
      byId: async (id) =>
        accountMenu
          ? (accountMenu.find((a) => a.id === id) ?? null)
          : ((await scoped.findAccountsInScope([id]))[0] ?? null),
      byName: async (text, limit) =>
        (await scoped.findAccountsInScopeByName(text, limit)).map((a) => ({ ...a, label: accountLabel(a) })),
    },
    (id) => `Unknown client "${id}": choose one of your ${isAgency ? 'accounts' : 'account'}.`,
  );
  // No client chosen and too many accounts for a menu (an agency of many clients): the storage reads the agency's
  // scope itself, so that the list does not first read a thousand account ids and hand them back.
  const accountIds = client.chosen ? [client.chosen.id] : (accountMenu?.map((a) => a.id) ?? null);
  const agentLabel = (a: ScopeAgent) =>
    isAgency && a.accountId !== viewer.accountId ? `${a.name} (${a.accountName})` : a.name;
  const agent = await chooseFrom(
    { one: 'agent', many: 'agents' },
    { id: typed.agent, idRefused: refused.has('agent'), name: typed.agent_name, nameCleared: cleared('agent_name') },
    {
      byId: async (id) =>
        agentMenu ? (agentMenu.find((a) => a.id === id) ?? null) : ((await scoped.findAgentsInScope([id]))[0] ?? null),
      byName: async (text, limit) =>
        (await scoped.findAgentsInScopeByName(client.chosen ? [client.chosen.id] : null, text, limit)).map((a) => ({
          ...a,
          label: agentLabel(a),
        })),
    },
    (id) => `Unknown agent "${id}": choose one of your agents.`,
  );
  for (const choice of [client, agent]) if (choice.problem) problems.push(choice.problem);
  if (agent.chosen) filters.agentId = agent.chosen.id;
  for (const [name, end] of [
    ['from', false],
    ['to', true],
  ] as const) {
    const value = typed[name];
    if (!value) continue;
    const { at, problem } = dateFilter(value, end, request.times);
    if (at && !refused.has(name)) filters[name] = at;
    else problems.push(problem);
  }
  if (filters.from && filters.to && filters.from >= filters.to) problems.push('The date range ends before it starts.');
  if (typed.number) {
    const digits = NUMBER_PREFIX.exec(typed.number.replace(/[\s\-().]/g, ''))?.[1];
    if (digits && digits[0] !== '0') filters.numberPrefix = `+${digits}`;
    else
      problems.push(
        `"${typed.number}" is not the start of a phone number: write + and the first digits (like +1415) or the whole number in E.164 form (like +14155552671).`,
      );
  }
  if (typed.name) filters.namePrefix = typed.name;
  if (typed.meta_key || typed.meta_value) {
    const key = typed.meta_key;
    if (!key) problems.push('Give the metadata key to search (like crm_id), or clear the metadata value.');
    else if ([...key].length > METADATA_KEY_MAX)
      problems.push(`"${key}" is not a metadata key: a key has at most ${METADATA_KEY_MAX} characters.`);
    else if (!typed.meta_value)
      problems.push(`Give the value of the metadata key "${key}" to search for, or clear the key.`);
    else filters.metadata = { key, values: metadataValues(typed.meta_value) };
  }
  const outcome = outcomeFilter(typed.outcome, refused.has('outcome'));
  if (outcome.problem) problems.push(outcome.problem);
  filters.outcome = outcome.outcome;
  let callId: string | null = null;
  if (typed.call) {
    if (!refused.has('call')) callId = canonicalUuid(typed.call);
    else problems.push(`"${typed.call}" is not a call id (a call id looks like 0b7f3c9e-5d1a-4c2b-9a8e-6f4d2c1b0a9e).`);
  }
  const held = heldFilter(typed.held, refused.has('held'));
  if (held.problem) problems.push(held.problem);
  filters.held = held.held;
  const beforeText = unreadable ? undefined : query?.before?.trim();
  const before = beforeText ? decodeCursor(beforeText) : undefined;
  if (before === null) problems.push('This link to older calls is not valid. Start again from the newest calls.');

  let calls: CallListRow[] = [];
  let next: CallCursor | null = null;
  if (problems.length === 0) {
    if (callId) calls = await scoped.callInHistory(accountIds, { callId, filters });
    else
      ({ calls, next } = await scoped.callHistory(accountIds, {
        filters,
        before: before ?? undefined,
        limit: PAGE_SIZE,
      }));
  }
  // What the rows show besides themselves, read at once: the metadata column, queue positions, and the names of the
  // page's agents and accounts (from the menus, else read for these rows alone, in one statement).
  const [columnValues, positions, rowNames, triggeredBy] = await Promise.all([
    column ? scoped.metadataValues(calls, column) : new Map<string, unknown>(),
    scoped.queuePositions(
      calls.filter((c) => waitsForSlot(c, now)),
      now,
    ),
    scoped.findInScopeById({
      agentIds: agentMenu ? [] : calls.map((c) => c.agentId),
      accountIds: accountMenu ? [] : calls.map((c) => c.listedForAccountId ?? c.accountId),
    }),
    triggeredByWords(request, calls),
  ]);
  const rowAgents = agentMenu ?? rowNames.agents;
  const rowAccounts = accountMenu ?? rowNames.accounts;
  // The filters as typed, with the agent and the client they chose carried by id (a name may fit others later).
  const kept: Record<string, string> = { ...typed };
  for (const [name, choice] of [
    ['agent', agent],
    ['client', client],
  ] as const) {
    if (choice.chosen) kept[name] = choice.chosen.id;
    if (choice.chosen && kept[`${name}_name`] !== undefined) kept[`${name}_name`] = choice.chosen.name;
  }
  const link = (extra: Record<string, string>) => {
    const params = new URLSearchParams({ ...kept, ...extra }).toString();
    return `/dashboard/calls${params ? `?${params}` : ''}`;
  };
  const filtered = Object.keys(typed).length > 0;
  const accountNames = new Map(rowAccounts.map((a) => [a.id, a.name]));
  const agentNames = new Map(rowAgents.map((a) => [a.id, a.name]));
  const agentAttempts = new Map(rowAgents.map((a) => [a.id, a.maxAttempts]));
  // A call an agency's key placed on a client's agent shows under that client (and is marked).
  const clientWords = (id: string) => (own(id) ? `${accountNames.get(id)} (own)` : (accountNames.get(id) ?? '-'));
  const choicesOf = (name: 'agent' | 'client', choice: FilterChoice) =>
    choice.choices.map((c) => ({
      label: c.label,
      href: link({ [name]: c.chosen.id, [`${name}_name`]: c.chosen.name }),
    }));
  const model: PageData<'calls'> = {
    title: 'Calls',
    isAgency,
    datesZone: request.times.zone,
    problems,
    typed,
    filtered,
    // Read by the live refresh: the page shows a call that may still change.
    live: hasActiveCall(calls),
    statuses: CALL_STATUSES.map((s) => ({ value: s, label: `${STATUS_WORDS[s]} (${s})` })),
    outcomes,
    agentFilter: {
      menu: agentMenu?.map((a) => ({ id: a.id, label: agentLabel(a) })) ?? null,
      chosen: agent.chosen,
      typedName: typed.agent_name ?? '',
      choices: choicesOf('agent', agent),
    },
    clientFilter: {
      menu: accountMenu?.map((a) => ({ id: a.id, label: accountLabel(a) })) ?? null,
      chosen: client.chosen,
      typedName: typed.client_name ?? '',
      choices: choicesOf('client', client),
    },
    column,
    ...exportForm(request.times, now),
    columnBack: new URLSearchParams(kept).toString(),
    // The page too: after a cancel the list comes back where it was (src/routes/dashboard/call-cancel.ts).
    cancelBack: new URLSearchParams({ ...kept, ...(before && beforeText ? { before: beforeText } : {}) }).toString(),
    cancelAction: calls.some((c) => c.status === 'initiated') ? '/dashboard/calls/cancel' : null,
    calls: calls.map((c) => {
      const badge = callBadge(c, now, request.times, positions.get(c.id));
      const outcomes = storedOutcomes(c.attemptOutcomes);
      const attempts = attemptsCell(
        c,
        outcomes,
        attemptsDialled({ ...c, attemptsEnded: outcomes.length }),
        agentAttempts.get(c.agentId) ?? null,
        request.times,
      );
      return {
        id: c.id,
        cancelable: c.status === 'initiated',
        href: `/dashboard/calls/${c.id}`,
        created: request.times.time(c.createdAt),
        number: c.phoneNumber,
        name: c.name ?? '',
        agent: agentNames.get(c.agentId) ?? 'an agent no longer listed',
        client: clientWords(c.listedForAccountId ?? c.accountId),
        triggeredBy: c.listedForAccountId ? triggeredBy : null,
        status: badge.text,
        tone: badge.tone,
        statusTitle: badge.title ?? null,
        statusParts: badge.parts ?? null,
        attempts: attempts?.text ?? null,
        attemptsTitle: attempts?.title ?? null,
        // A failed voicemail's badge says so already.
        voicemail: c.answeredBy === 'machine' && c.failureReason !== 'voicemail',
        duration: formatDuration(c.durationSeconds),
        outcome: c.outcome ?? '',
        columnValue: columnValues.has(c.id) ? metadataCellWords(columnValues.get(c.id)) : '',
      };
    }),
    olderHref: next ? link({ before: encodeCursor(next) }) : null,
    newestHref: before ? link({}) : null,
    clearHref: filtered ? '/dashboard/calls' : null,
  };
  return { status: problems.length ? 400 : 200, model };
}

/**
 * The mark of the rows an agency's key placed on a client's agent, "Triggered by <agency> (agency key)": the agency is
 * the viewer's own account or, for a client's user, its agency (read only when the page has such a row).
 */
async function triggeredByWords(request: FastifyRequest, calls: CallListRow[]): Promise<string> {
  const viewer = request.user;
  if (!calls.some((c) => c.listedForAccountId)) return '';
  const agency = viewer.accountKind === 'agency' ? viewer.accountName : (await request.scoped.agency(viewer))?.name;
  return `Triggered by ${agency ?? 'the agency'} (agency key)`;
}
