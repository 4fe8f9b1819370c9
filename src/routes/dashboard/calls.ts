// Calls: the calls of the accounts the viewer manages, newest first, filtered, 50 a page (keyset: "Older" carries the
// last call's time and id), and one call's detail: its timeline, metadata as given, webhook deliveries and their
// attempts. "Resend" posts to the delivery log's action (api-webhooks/deliveries.ts) of the call's account.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unknownStatus } from '../../admin/calls.js';
import { CALL_STATUSES, LIVE_STATUSES, type CallStatus } from '../../../schemas/vocabulary.js';
import { METADATA_KEY_MAX } from '../../../schemas/trigger.js';
import { isAgencyScope } from '../../domain/tenancy.js';
import { CallParams, CallsColumnForm, CallsQuery } from '../../../schemas/dashboard/calls.js';
import { formProblem } from '../../views/form-problem.js';
import { canonicalUuid } from '../../../schemas/uuid.js';
import type { ActiveUser, ScopeAgent } from '../../storage/index.js';
import type { CallCursor, CallDetail, CallHistoryFilters, CallListRow, MetadataMatch } from '../../storage/index.js';
import callCancel from './call-cancel.js';
import { callDoNotCall } from '../../views/pages/do-not-call.js';
import { metadataRows, reindent, timeline } from '../../views/pages/call-timeline.js';
import { attemptsCell, callBadge, hasActiveCall, metadataCellWords, waitsForSlot } from '../../views/format/badge.js';
import {
  ANSWERED_BY_WORDS,
  ATTEMPT_OUTCOME_WORDS,
  REASON_WORDS,
  STATUS_WORDS,
  TIMEZONE_SOURCE_WORDS,
} from '../../views/format/status.js';
import { cannotCancelWords, deliveryStatusWords, disabledReasonWords } from '../../views/format/notices.js';
import { decodeCursor, encodeCursor } from '../../views/format/cursor.js';
import { formatDuration, formatTime, formatTimeIn, parseUtcTime, waitingWords } from '../../views/format/time.js';
import { attemptsDialled } from '../../calls/call-view.js';
import type { AttemptOutcomeData } from '../../../schemas/call.js';
import type { CallDoNotCall } from '../../views/pages/call.js';
import type { PageData } from '../../views/page-models.js';

const PAGE_SIZE = 50;
const FILTER_NAMES = [
  'status',
  'agent',
  'agent_name',
  'client',
  'client_name',
  'from',
  'to',
  'number',
  'name',
  'meta_key',
  'meta_value',
  'call',
] as const;
/** Above this many agents (or accounts), the Agent (or Client) filter is a name to type rather than a menu. */
export const FILTER_MENU_MAX = 100;
/** The most agents or clients offered to choose from when a typed name fits several. */
const NAME_CHOICES_MAX = 20;
/** The start of a phone number once separators are dropped: `+` (may be left out) and 1 to 15 digits. */
const NUMBER_PREFIX = /^\+?(\d{1,15})$/;
/** A number as JSON writes it: such a search value matches the JSON number too. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

type Viewer = ActiveUser;

/** The JSON values a metadata search value stands for: itself as a string, and a number or literal it spells. */
function metadataValues(value: string): MetadataMatch['values'] {
  if (JSON_NUMBER.test(value) && Number.isFinite(Number(value))) return [Number(value), value];
  if (value === 'true' || value === 'false' || value === 'null') return [JSON.parse(value) as unknown, value];
  return [value];
}

/** The filters as typed (trimmed; empty ones left out), for the form and the links. */
function typedFilters(query: CallsQuery | undefined): Partial<Record<(typeof FILTER_NAMES)[number], string>> {
  const typed: Partial<Record<(typeof FILTER_NAMES)[number], string>> = {};
  for (const name of FILTER_NAMES) {
    const value = query?.[name]?.trim();
    if (value) typed[name] = value;
  }
  return typed;
}

/** An agent or a client the filters name: its id and name. */
interface Chosen {
  id: string;
  name: string;
}

/** What the Agent or Client filter came to: the one chosen (or none), a problem, or several that fit a typed name. */
interface FilterChoice {
  chosen: Chosen | null;
  problem: string | null;
  choices: { label: string; chosen: Chosen }[];
}

const NO_CHOICE: FilterChoice = { chosen: null, problem: null, choices: [] };

/**
 * The Agent or Client filter: an id (a menu's choice, a link's) stands unless a name typed beside it no longer fits it;
 * else the typed name picks the one whose whole name it is, or the only one whose name starts with it. Several: the
 * first NAME_CHOICES_MAX to choose from.
 */
async function chooseFrom(
  kind: { one: string; many: string },
  typed: { id?: string; idRefused: boolean; name?: string; nameCleared: boolean },
  lookUp: {
    byId: (id: string) => Promise<Chosen | null>;
    byName: (text: string, limit: number) => Promise<(Chosen & { label: string })[]>;
  },
  unknownId: (typedId: string) => string,
): Promise<FilterChoice> {
  const sameName = (a: string, b: string) => a.toLocaleLowerCase('en') === b.toLocaleLowerCase('en');
  // The form's name field sent empty beside the id it carried: the person cleared the filter.
  if (typed.nameCleared) return NO_CHOICE;
  if (typed.id) {
    const found = typed.idRefused ? null : await lookUp.byId(canonicalUuid(typed.id));
    if (!found) return { ...NO_CHOICE, problem: unknownId(typed.id) };
    if (!typed.name || sameName(found.name, typed.name)) return { ...NO_CHOICE, chosen: found };
  }
  if (!typed.name) return NO_CHOICE;
  const found = await lookUp.byName(typed.name, NAME_CHOICES_MAX + 1);
  const whole = found.filter((f) => sameName(f.name, typed.name!));
  if (whole.length === 1 || (whole.length === 0 && found.length === 1)) return { ...NO_CHOICE, chosen: found[0]! };
  if (found.length === 0) return { ...NO_CHOICE, problem: `No ${kind.one}'s name starts with "${typed.name}".` };
  const shown = found.slice(0, NAME_CHOICES_MAX);
  const count = found.length > NAME_CHOICES_MAX ? `More than ${NAME_CHOICES_MAX}` : String(found.length);
  return {
    chosen: null,
    problem: `${count} ${kind.many} have a name that starts with "${typed.name}": choose one below, or type more of the name.`,
    choices: shown.map((f) => ({ label: f.label, chosen: { id: f.id, name: f.name } })),
  };
}

async function listPage(request: FastifyRequest, query: CallsQuery | undefined, reply: FastifyReply) {
  const viewer: Viewer = request.user;
  const scoped = request.scoped;
  const scope = request.scope;
  const now = request.admin.now();
  const isAgency = isAgencyScope(scope);
  // An agency of a few accounts and agents chooses them from menus; one of thousands types their names, and the page
  // reads only the accounts and agents its filters and rows name.
  const [accountMenu, agentList, column] = await Promise.all([
    scoped.listAccountsInScopeUpTo(FILTER_MENU_MAX),
    scoped.listAgentsInScope(FILTER_MENU_MAX + 1),
    scoped.callsColumn(),
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

  const filters: CallHistoryFilters = {
    status: null,
    agentId: null,
    numberPrefix: null,
    namePrefix: null,
    metadata: null,
    from: null,
    to: null,
  };
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
    const at = refused.has(name) ? null : parseUtcTime(value, end);
    if (at) filters[name] = at;
    else problems.push(`"${value}" is not a date: write it as YYYY-MM-DD (or YYYY-MM-DDTHH:MM), in UTC.`);
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
  let callId: string | null = null;
  if (typed.call) {
    if (!refused.has('call')) callId = canonicalUuid(typed.call);
    else problems.push(`"${typed.call}" is not a call id (a call id looks like 0b7f3c9e-5d1a-4c2b-9a8e-6f4d2c1b0a9e).`);
  }
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
  return reply.code(problems.length ? 400 : 200).page('calls', {
    title: 'Calls',
    isAgency,
    problems,
    typed,
    filtered,
    // Read by the live refresh: the page shows a call that may still change.
    live: hasActiveCall(calls),
    statuses: CALL_STATUSES.map((s) => ({ value: s, label: `${STATUS_WORDS[s]} (${s})` })),
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
    columnBack: new URLSearchParams(kept).toString(),
    // The page too: after a cancel the list comes back where it was (src/routes/dashboard/call-cancel.ts).
    cancelBack: new URLSearchParams({ ...kept, ...(before && beforeText ? { before: beforeText } : {}) }).toString(),
    cancelAction: calls.some((c) => c.status === 'initiated') ? '/dashboard/calls/cancel' : null,
    calls: calls.map((c) => {
      const badge = callBadge(c, now, positions.get(c.id));
      const outcomes = storedOutcomes(c.attemptOutcomes);
      const attempts = attemptsCell(
        c,
        outcomes,
        attemptsDialled({ ...c, attemptsEnded: outcomes.length }),
        agentAttempts.get(c.agentId) ?? null,
      );
      return {
        id: c.id,
        cancelable: c.status === 'initiated',
        href: `/dashboard/calls/${c.id}`,
        created: formatTime(c.createdAt),
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
        columnValue: columnValues.has(c.id) ? metadataCellWords(columnValues.get(c.id)) : '',
      };
    }),
    olderHref: next ? link({ before: encodeCursor(next) }) : null,
    newestHref: before ? link({}) : null,
    clearHref: filtered ? '/dashboard/calls' : null,
  });
}

/** "Show as a column": remembers the metadata key (blank: none) and goes back to the list as it was filtered. */
async function saveColumn(request: FastifyRequest, body: CallsColumnForm, reply: FastifyReply) {
  const problem = formProblem(request);
  if (problem) return reply.code(400).page('error', { title: 'Metadata column', message: problem });
  // Re-serialized: whatever was posted, the redirect stays on the Calls list.
  const back = new URLSearchParams(body.back ?? '');
  back.delete('before');
  const to = `/dashboard/calls${back.size ? `?${back.toString()}` : ''}`;
  const key = body.column.trim();
  if ([...key].length > METADATA_KEY_MAX)
    return reply.seeOther(to, {
      kind: 'error',
      text: `"${key}" is not a metadata key: a key has at most ${METADATA_KEY_MAX} characters. The column was not changed.`,
    });
  await request.scoped.saveCallsColumn(key || null);
  return reply.seeOther(
    to,
    key
      ? { kind: 'ok', text: `The metadata key "${key}" is shown as a column.` }
      : { kind: 'ok', text: 'No metadata column is shown.' },
  );
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

/** Where the delivery log of the call's account lives: the viewer's own settings, or (agency users) a client's. */
function deliveryLogBase(viewer: Viewer, accountId: string): string {
  return accountId === viewer.accountId
    ? '/dashboard/settings/api-webhooks'
    : `/dashboard/clients/${accountId}/api-webhooks`;
}

/** The stored attempt_outcomes, as the payload has them (a value edited by hand into another shape shows none). */
function storedOutcomes(value: unknown): AttemptOutcomeData[] {
  return Array.isArray(value)
    ? value.filter((o): o is AttemptOutcomeData => typeof o === 'object' && o !== null && 'outcome' in o && 'at' in o)
    : [];
}

/** How many attempts were dialled and, while the call waits for a retry, which attempt is next. */
function attemptsWords(call: CallDetail, ended: number): string {
  const dialled = attemptsDialled({ ...call, attemptsEnded: ended });
  if (call.status === 'initiated' && call.attempt > 1) return `${dialled} so far; attempt ${call.attempt} is next`;
  return String(dialled);
}

function detailPage(viewer: Viewer, call: CallDetail, now: Date, doNotCall: CallDoNotCall): PageData<'call'> {
  const log = deliveryLogBase(viewer, call.accountId);
  // Listed for a client (an agency's key on its agent): a client's user sees it, not the agency's deliveries.
  const triggeredBy = call.listedFor ? `${call.account.name} (agency key)` : null;
  const eventsElsewhere =
    call.listedFor !== null && call.accountId !== viewer.accountId && viewer.accountKind === 'client';
  const rows = metadataRows(call.metadata);
  const outcomes = storedOutcomes(call.attemptOutcomes);
  const eventOrder = new Map(call.events.map((e, i) => [e.id, i]));
  const deliveries = [...call.deliveries].sort(
    (a, b) =>
      a.createdAt.getTime() - b.createdAt.getTime() ||
      (eventOrder.get(a.callEventId) ?? 0) - (eventOrder.get(b.callEventId) ?? 0),
  );
  return {
    title: `Call to ${call.phoneNumber}`,
    call: {
      id: call.id,
      phoneNumber: call.phoneNumber,
      fromNumber: call.fromNumber,
      agent: call.agent.name,
      account: (call.listedFor ?? call.account).name,
      accountKind: (call.listedFor ?? call.account).kind,
      triggeredBy,
      eventsGoTo: eventsElsewhere ? call.account.name : null,
      name: call.name,
      email: call.email,
      status: STATUS_WORDS[call.status],
      statusClass: call.status,
      reason: call.failureReason ? REASON_WORDS[call.failureReason] : null,
      created: formatTime(call.createdAt),
      duration: formatDuration(call.durationSeconds),
      waiting: waitingWords(call, now, call.timezone),
      attempts: attemptsWords(call, outcomes.length),
      scheduled: call.scheduledAt ? formatTimeIn(call.scheduledAt, call.timezone) : null,
      answeredBy: call.answeredBy ? ANSWERED_BY_WORDS[call.answeredBy] : null,
      voicemailLeft: call.voicemailLeft === null ? null : call.voicemailLeft ? 'Yes' : 'No',
      timezone: call.timezone
        ? `${call.timezone} (${call.timezoneSource ? TIMEZONE_SOURCE_WORDS[call.timezoneSource] : "the agent's"})`
        : null,
    },
    attemptOutcomes: outcomes.map((o) => ({
      attempt: o.attempt,
      outcome: ATTEMPT_OUTCOME_WORDS[o.outcome] ?? o.outcome,
      at: formatTimeIn(new Date(o.at), call.timezone),
    })),
    cancelAction: call.status === 'initiated' ? `/dashboard/calls/${call.id}/cancel` : null,
    cannotCancel: cannotCancelWords(call.status, call.failureReason),
    doNotCall,
    timeline: timeline(call, now),
    metadataRows: rows,
    metadataJson: rows === null ? call.metadata : reindent(call.metadata),
    deliveryLogHref: `${log}/deliveries`,
    deliveries: (eventsElsewhere ? [] : deliveries).map((d) => ({
      id: d.id,
      eventType: d.eventType,
      status: d.status,
      statusWords: deliveryStatusWords(d.status),
      next: d.status === 'pending' ? formatTime(d.nextAttemptAt) : null,
      heldReason: d.status === 'held' ? disabledReasonWords(d.heldReason) : null,
      resendAction: `${log}/deliveries/${d.id}/resend`,
      attempts: d.attempts.map((a) => ({
        number: a.attemptNumber,
        at: formatTime(a.startedAt),
        httpStatus: a.responseStatus === null ? '-' : String(a.responseStatus),
        latency: `${a.durationMs} ms`,
        error: a.error ?? '',
      })),
    })),
  };
}

const calls: FastifyPluginAsyncTypebox = async (fastify) => {
  // `/calls/:id`: a call of an account the viewer manages, else 404 (no such call, not an id, another tenant's).
  fastify.resolveManaged('call', 'id');
  await fastify.register(callCancel);

  fastify.get(
    '/calls',
    { schema: { hide: true, querystring: CallsQuery }, attachValidation: true },
    async (request, reply) => listPage(request, request.query, reply),
  );

  fastify.post(
    '/calls/column',
    { schema: { hide: true, body: CallsColumnForm }, attachValidation: true },
    async (request, reply) => saveColumn(request, request.body, reply),
  );

  fastify.get(
    '/calls/:id',
    // A malformed id is resolved like any unknown one: 404.
    { schema: { hide: true, params: CallParams }, attachValidation: true },
    async (request, reply) => {
      const call = request.managed('call');
      const doNotCall = await callDoNotCall(request, call);
      const live = (LIVE_STATUSES as readonly CallStatus[]).includes(call.status);
      return reply.page('call', { ...detailPage(request.user, call, request.admin.now(), doNotCall), live });
    },
  );
};

export default calls;
