// Calls: the calls of the accounts the viewer manages, newest first, filtered, 50 a page (keyset: "Older" carries the
// last call's time and id), and one call's detail: its timeline, metadata as given, webhook deliveries and their
// attempts. "Resend" posts to the delivery log's action (api-webhooks.ts) of the call's account.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isStatus, unknownStatus } from '../../admin/calls.js';
import { CALL_STATUSES } from '../../domain/call-vocabulary.js';
import { isUuid } from '../../domain/ids.js';
import { canManageAccount } from '../../domain/people-tenancy.js';
import { E164_PATTERN } from '../../domain/phone-number.js';
import { requireUser, viewerOf } from '../../../plugins/dashboard/guards.js';
import { CallParams, CallsQuery } from '../../../schemas/dashboard/calls.js';
import {
  accountsOfViewer,
  agentsOfViewer,
  findCallDetail,
  findCallInHistory,
  listCallHistory,
  type CallCursor,
  type CallDetail,
  type CallHistoryFilters,
  type CallListRow,
} from '../../storage/call-history.js';
import { deliveryStatusWords, disabledReasonWords } from './settings-words.js';
import {
  formatDuration,
  formatTime,
  metadataRows,
  REASON_WORDS,
  reindent,
  STATUS_WORDS,
  timeline,
} from './call-view.js';

const PAGE_SIZE = 50;
const FILTER_NAMES = ['status', 'agent', 'client', 'from', 'to', 'number', 'call'] as const;

export function encodeCursor(cursor: CallCursor): string {
  return `${cursor.createdAt.toISOString()}_${cursor.id}`;
}

function decodeCursor(value: string): CallCursor | null {
  const [at, id, rest] = value.split('_');
  if (
    !at ||
    !id ||
    rest !== undefined ||
    !isUuid(id) ||
    !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(at) ||
    Number.isNaN(Date.parse(at))
  )
    return null;
  return { createdAt: new Date(at), id: id.toLowerCase() };
}

/**
 * A day (`YYYY-MM-DD`) or a minute (`YYYY-MM-DDTHH:MM`, seconds optional), in UTC: the moment it starts, or for the
 * end of a range the moment after it (the range includes the whole day or minute). Undefined when it is no such date.
 */
export function parseDateBound(value: string, end: boolean): Date | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0'] = m;
  const at = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  const fields = [
    at.getUTCFullYear(),
    at.getUTCMonth() + 1,
    at.getUTCDate(),
    at.getUTCHours(),
    at.getUTCMinutes(),
    at.getUTCSeconds(),
  ];
  if (fields.join() !== [y, mo, d, h, mi, s].map(Number).join()) return undefined;
  if (!end) return at;
  const step = m[6] !== undefined ? 1_000 : m[4] !== undefined ? 60_000 : 86_400_000;
  return new Date(at.getTime() + step);
}

type Viewer = ReturnType<typeof viewerOf>;

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
  const viewer: Viewer = viewerOf(request);
  const isAgency = viewer.accountKind === 'agency';
  const [accounts, agents] = await Promise.all([
    accountsOfViewer(fastify.prisma, viewer),
    agentsOfViewer(fastify.prisma, viewer),
  ]);
  const accountNames = new Map(accounts.map((a) => [a.id, a.name]));
  const agentNames = new Map(agents.map((a) => [a.id, a.name]));
  const typed = request.validationError ? {} : typedFilters(request.query);
  const problems: string[] = request.validationError
    ? ['A filter is longer than any value it can have. Clear the filters and try again.']
    : [];

  const filters: CallHistoryFilters = { status: null, agentId: null, phoneNumber: null, from: null, to: null };
  if (typed.status) {
    if (isStatus(typed.status)) filters.status = typed.status;
    else problems.push(`${unknownStatus(typed.status)}.`);
  }
  if (typed.agent) {
    if (isUuid(typed.agent) && agentNames.has(typed.agent.toLowerCase())) filters.agentId = typed.agent.toLowerCase();
    else problems.push(`Unknown agent "${typed.agent}": choose one of your agents.`);
  }
  let accountIds = accounts.map((a) => a.id);
  if (typed.client) {
    if (isUuid(typed.client) && accountNames.has(typed.client.toLowerCase())) accountIds = [typed.client.toLowerCase()];
    else problems.push(`Unknown client "${typed.client}": choose one of your ${isAgency ? 'accounts' : 'account'}.`);
  }
  for (const [name, end] of [
    ['from', false],
    ['to', true],
  ] as const) {
    const value = typed[name];
    if (!value) continue;
    const at = parseDateBound(value, end);
    if (at) filters[name] = at;
    else problems.push(`"${value}" is not a date: write it as YYYY-MM-DD (or YYYY-MM-DDTHH:MM), in UTC.`);
  }
  if (filters.from && filters.to && filters.from >= filters.to) problems.push('The date range ends before it starts.');
  if (typed.number) {
    const number = typed.number.replace(/[\s\-().]/g, '');
    if (E164_PATTERN.test(number)) filters.phoneNumber = number;
    else problems.push(`"${typed.number}" is not a phone number in E.164 form (like +14155552671).`);
  }
  let callId: string | null = null;
  if (typed.call) {
    if (isUuid(typed.call)) callId = typed.call.toLowerCase();
    else problems.push(`"${typed.call}" is not a call id (a call id looks like 0b7f3c9e-5d1a-4c2b-9a8e-6f4d2c1b0a9e).`);
  }
  const beforeText = request.validationError ? undefined : request.query?.before?.trim();
  const before = beforeText ? decodeCursor(beforeText) : undefined;
  if (before === null) problems.push('This link to older calls is not valid. Start again from the newest calls.');

  let calls: CallListRow[] = [];
  let next: CallCursor | null = null;
  if (problems.length === 0) {
    if (callId) calls = await findCallInHistory(fastify.prisma, { accountIds, callId, filters });
    else
      ({ calls, next } = await listCallHistory(fastify.prisma, {
        accountIds,
        filters,
        before: before ?? undefined,
        limit: PAGE_SIZE,
      }));
  }
  const link = (extra: Record<string, string>) => {
    const params = new URLSearchParams({ ...typed, ...extra } as Record<string, string>).toString();
    return `/dashboard/calls${params ? `?${params}` : ''}`;
  };
  const filtered = Object.keys(typed).length > 0;
  return reply.code(problems.length ? 400 : 200).page('calls', {
    title: 'Calls',
    isAgency,
    problems,
    typed,
    filtered,
    statuses: CALL_STATUSES.map((s) => ({ value: s, label: `${STATUS_WORDS[s]} (${s})` })),
    agents: agents.map((a) => ({
      id: a.id,
      label: isAgency && a.accountId !== viewer.accountId ? `${a.name} (${accountNames.get(a.accountId)})` : a.name,
    })),
    accounts: accounts.map((a) => ({ id: a.id, label: a.id === viewer.accountId ? `${a.name} (agency)` : a.name })),
    calls: calls.map((c) => ({
      href: `/dashboard/calls/${c.id}`,
      created: formatTime(c.createdAt),
      number: c.phoneNumber,
      agent: agentNames.get(c.agentId) ?? 'an agent no longer listed',
      client: accountNames.get(c.accountId) ?? '-',
      status: STATUS_WORDS[c.status],
      statusClass: c.status,
      reason: c.failureReason ? REASON_WORDS[c.failureReason] : '',
      duration: formatDuration(c.durationSeconds),
    })),
    olderHref: next ? link({ before: encodeCursor(next) }) : null,
    newestHref: before ? link({}) : null,
    clearHref: filtered ? '/dashboard/calls' : null,
  });
}

/** The call `id` when the viewer manages its account, else a 404 (no such call, not an id, another tenant's). */
async function managedCall(request: FastifyRequest, reply: FastifyReply, id: string): Promise<CallDetail> {
  const call = isUuid(id) ? await findCallDetail(request.server.prisma, id.toLowerCase()) : null;
  if (!call || !canManageAccount(viewerOf(request), call.account)) throw reply.server.httpErrors.notFound();
  return call;
}

/** Where the delivery log of the call's account lives: the viewer's own settings, or (agency users) a client's. */
function deliveryLogBase(viewer: Viewer, accountId: string): string {
  return accountId === viewer.accountId
    ? '/dashboard/settings/api-webhooks'
    : `/dashboard/clients/${accountId}/api-webhooks`;
}

function detailPage(viewer: Viewer, call: CallDetail, now: Date) {
  const log = deliveryLogBase(viewer, call.accountId);
  const rows = metadataRows(call.metadata);
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
    },
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
  fastify.get<{ Querystring: CallsQuery }>(
    '/calls',
    { schema: { hide: true, querystring: CallsQuery }, attachValidation: true, preHandler: requireUser },
    async (request, reply) => listPage(fastify, request, reply),
  );

  fastify.get<{ Params: CallParams }>(
    '/calls/:id',
    { schema: { hide: true, params: CallParams }, attachValidation: true, preHandler: requireUser },
    async (request, reply) => {
      if (request.validationError) throw fastify.httpErrors.notFound();
      const call = await managedCall(request, reply, request.params.id);
      return reply.page('call', detailPage(viewerOf(request), call, fastify.now()));
    },
  );
}
