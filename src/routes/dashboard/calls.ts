// Calls: the calls of the accounts the viewer manages, newest first, filtered, 50 a page (keyset: "Older" carries the
// last call's time and id), and one call's detail: its timeline, metadata as given, webhook deliveries and their
// attempts. "Resend" posts to the delivery log's action (api-webhooks/deliveries.ts) of the call's account.
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { unknownStatus } from '../../admin/calls.js';
import { CALL_STATUSES, LIVE_STATUSES, type CallStatus } from '../../../schemas/vocabulary.js';
import { METADATA_KEY_MAX } from '../../../schemas/trigger.js';
import { isAgencyScope } from '../../domain/tenancy.js';
import { CallParams, CallsColumnForm, CallsQuery } from '../../../schemas/dashboard/calls.js';
import { formProblem } from './form-problem.js';
import { canonicalUuid } from '../../../schemas/uuid.js';
import type { ActiveUser } from '../../storage/index.js';
import {
  type CallCursor,
  type CallDetail,
  type CallHistoryFilters,
  type CallListRow,
  type MetadataMatch,
} from '../../storage/index.js';
import callCancel from './call-cancel.js';
import { callDoNotCall } from './do-not-call-page.js';
import { metadataRows, reindent, timeline } from './call-view.js';
import {
  attemptsCell,
  callBadge,
  hasActiveCall,
  metadataCellWords,
  waitsForSlot,
  ANSWERED_BY_WORDS,
  ATTEMPT_OUTCOME_WORDS,
  cannotCancelWords,
  decodeCursor,
  deliveryStatusWords,
  disabledReasonWords,
  encodeCursor,
  formatDuration,
  formatTime,
  formatTimeIn,
  parseUtcTime,
  REASON_WORDS,
  STATUS_WORDS,
  TIMEZONE_SOURCE_WORDS,
  waitingWords,
} from './format.js';
import { attemptsDialled } from '../../calls/call-view.js';
import type { AttemptOutcomeData } from '../../../schemas/call.js';
import type { CallDoNotCall, PageData } from '../../views/page-models.js';

const PAGE_SIZE = 50;
const FILTER_NAMES = [
  'status',
  'agent',
  'client',
  'from',
  'to',
  'number',
  'name',
  'meta_key',
  'meta_value',
  'call',
] as const;
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

async function listPage(
  fastify: FastifyInstance,
  request: FastifyRequest<{ Querystring: CallsQuery }>,
  reply: FastifyReply,
) {
  const viewer: Viewer = request.user;
  const now = fastify.now();
  const isAgency = isAgencyScope(request.scope);
  const [accounts, agents, column] = await Promise.all([
    fastify.storage.scoped.listAccountsInScope(request.scope),
    fastify.storage.scoped.listAgentsInScope(request.scope),
    fastify.storage.users.callsMetadataColumnOf(viewer.id),
  ]);
  const accountNames = new Map(accounts.map((a) => [a.id, a.name]));
  const agentNames = new Map(agents.map((a) => [a.id, a.name]));
  const agentAttempts = new Map(agents.map((a) => [a.id, a.maxAttempts]));
  // The route's validation stops at the first filter it refuses; the schema's own errors name every one of them.
  const errors = request.validationError ? [...Value.Errors(CallsQuery, request.query ?? {})] : [];
  const refused = new Set(errors.map((error) => error.path.split('/')[1]));
  const unreadable =
    errors.length === 0
      ? Boolean(request.validationError)
      : errors.some((e) => e.type !== ValueErrorType.StringPattern);
  const typed = unreadable ? {} : typedFilters(request.query);
  const problems: string[] = unreadable
    ? ['A filter is longer than any value it can have. Clear the filters and try again.']
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
  if (typed.agent) {
    const agentId = canonicalUuid(typed.agent);
    if (!refused.has('agent') && agentNames.has(agentId)) filters.agentId = agentId;
    else problems.push(`Unknown agent "${typed.agent}": choose one of your agents.`);
  }
  let accountIds = accounts.map((a) => a.id);
  if (typed.client) {
    const clientId = canonicalUuid(typed.client);
    if (!refused.has('client') && accountNames.has(clientId)) accountIds = [clientId];
    else problems.push(`Unknown client "${typed.client}": choose one of your ${isAgency ? 'accounts' : 'account'}.`);
  }
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
  const beforeText = unreadable ? undefined : request.query?.before?.trim();
  const before = beforeText ? decodeCursor(beforeText) : undefined;
  if (before === null) problems.push('This link to older calls is not valid. Start again from the newest calls.');

  let calls: CallListRow[] = [];
  let next: CallCursor | null = null;
  if (problems.length === 0) {
    if (callId) calls = await fastify.storage.history.findCallInHistory({ accountIds, callId, filters });
    else
      ({ calls, next } = await fastify.storage.history.listCallHistory({
        accountIds,
        filters,
        before: before ?? undefined,
        limit: PAGE_SIZE,
      }));
  }
  const ids = calls.map((c) => c.id);
  const [columnValues, positions] = await Promise.all([
    column ? fastify.storage.history.metadataValues(ids, column) : new Map<string, unknown>(),
    fastify.storage.history.queuePositions(
      calls.filter((c) => waitsForSlot(c, now)).map((c) => c.id),
      now,
    ),
  ]);
  const link = (extra: Record<string, string>) => {
    const params = new URLSearchParams({ ...typed, ...extra } as Record<string, string>).toString();
    return `/dashboard/calls${params ? `?${params}` : ''}`;
  };
  const filtered = Object.keys(typed).length > 0;
  const own = (accountId: string) => isAgency && accountId === viewer.accountId;
  return reply.code(problems.length ? 400 : 200).page('calls', {
    title: 'Calls',
    isAgency,
    problems,
    typed,
    filtered,
    // Read by the live refresh: the page shows a call that may still change.
    live: hasActiveCall(calls),
    statuses: CALL_STATUSES.map((s) => ({ value: s, label: `${STATUS_WORDS[s]} (${s})` })),
    agents: agents.map((a) => ({
      id: a.id,
      label: isAgency && a.accountId !== viewer.accountId ? `${a.name} (${accountNames.get(a.accountId)})` : a.name,
    })),
    accounts: accounts.map((a) => ({ id: a.id, label: own(a.id) ? `Own calls (${a.name})` : a.name })),
    column,
    columnBack: new URLSearchParams(typed as Record<string, string>).toString(),
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
        client: own(c.accountId) ? `${accountNames.get(c.accountId)} (own)` : (accountNames.get(c.accountId) ?? '-'),
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
async function saveColumn(
  fastify: FastifyInstance,
  request: FastifyRequest<{ Body: CallsColumnForm }>,
  reply: FastifyReply,
) {
  const problem = formProblem(request);
  if (problem) return reply.code(400).page('error', { title: 'Metadata column', message: problem });
  // Re-serialized: whatever was posted, the redirect stays on the Calls list.
  const back = new URLSearchParams(request.body.back ?? '');
  back.delete('before');
  const to = `/dashboard/calls${back.size ? `?${back.toString()}` : ''}`;
  const key = request.body.column.trim();
  if ([...key].length > METADATA_KEY_MAX)
    return reply.seeOther(to, {
      kind: 'error',
      text: `"${key}" is not a metadata key: a key has at most ${METADATA_KEY_MAX} characters. The column was not changed.`,
    });
  await fastify.storage.users.setCallsMetadataColumn(request.user.id, key || null);
  return reply.seeOther(
    to,
    key
      ? { kind: 'ok', text: `The metadata key "${key}" is shown as a column.` }
      : { kind: 'ok', text: 'No metadata column is shown.' },
  );
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
      account: call.account.name,
      accountKind: call.account.kind,
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
    deliveries: deliveries.map((d) => ({
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

export default async function calls(fastify: FastifyInstance) {
  // `/calls/:id`: a call of an account the viewer manages, else 404 (no such call, not an id, another tenant's).
  fastify.resolveManaged('call', 'id');
  await fastify.register(callCancel);

  fastify.get<{ Querystring: CallsQuery }>(
    '/calls',
    { schema: { hide: true, querystring: CallsQuery }, attachValidation: true },
    async (request, reply) => listPage(fastify, request, reply),
  );

  fastify.post<{ Body: CallsColumnForm }>(
    '/calls/column',
    { schema: { hide: true, body: CallsColumnForm }, attachValidation: true },
    async (request, reply) => saveColumn(fastify, request, reply),
  );

  fastify.get<{ Params: CallParams }>(
    '/calls/:id',
    // A malformed id is resolved like any unknown one: 404.
    { schema: { hide: true, params: CallParams }, attachValidation: true },
    async (request, reply) => {
      const call = request.managed('call');
      const doNotCall = await callDoNotCall(fastify, request.user, call);
      const live = (LIVE_STATUSES as readonly CallStatus[]).includes(call.status);
      return reply.page('call', { ...detailPage(request.user, call, fastify.now(), doNotCall), live });
    },
  );
}
