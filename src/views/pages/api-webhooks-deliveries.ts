// The api-webhooks-deliveries page's model: what src/views/pages/api-webhooks-deliveries.eta reads (with the partials it includes).
// The delivery log's page: its filters as typed and what is wrong with each, and each delivery with its payload,
// every attempt's answer, its badge and whether "Resend" can act on it.
import type { ApiWebhooksPlace, EndpointState, KeysOf, Problem } from './model-parts.js';
import { DELIVERY_STATUSES, isOneOf, WEBHOOK_EVENT_TYPES, type DeliveryStatus } from '../../../schemas/vocabulary.js';
import type { DeliveryLogQuery } from '../../../schemas/dashboard/api-webhooks.js';
import type { DeliveryLogFilters, LoggedDelivery } from '../../storage/index.js';
import type { PageData } from '../page-models.js';
import { reindent } from './call-timeline.js';
import { decodeCursor, encodeCursor, type KeysetCursor } from '../format/cursor.js';
import { disabledReasonWords } from '../format/notices.js';
import type { ShownTimes } from '../format/shown-times.js';
import { parseUtcTime } from '../format/time.js';

export type ApiWebhooksDeliveriesModel = ApiWebhooksPlace & {
  problem: Problem;
  endpoint: EndpointState | null;
  /** Whether a resend can act (the endpoint is enabled): otherwise no Resend button and no "Resend failed" form. */
  canResend: boolean;
  /** The filters as typed (empty ones left out). */
  filters: Partial<Record<'event' | 'status' | 'from' | 'to', string>>;
  /** What is wrong with each filter, shown next to it. */
  filterErrors: Partial<Record<'event' | 'status' | 'from' | 'to', string>>;
  filtered: boolean;
  eventChoices: { value: string; label: string }[];
  statusChoices: { value: string; label: string }[];
  /** The hidden fields of a resend form: the page's filters and cursor, to come back to it. */
  back: { name: string; value: string }[];
  /** "Resend failed since": 24 hours ago (UTC, datetime-local), or the value sent when it was refused. */
  resendSince: string;
  sinceError: string | null;
  deliveries: {
    id: string;
    eventType: string;
    callId: string;
    /** The number the call dialled, and the call's page (it names the call: issue 45, point 23). */
    callNumber: string;
    callHref: string;
    status: string;
    /** The badge's words and tone. */
    statusWords: string;
    tone: 'ok' | 'bad' | 'wait' | 'muted';
    at: string;
    nextAt: string | null;
    heldReason: string | null;
    /** The last attempt's answer in words ("HTTP 500 in 35 ms"); null before the first. */
    lastAnswer: string | null;
    /** The body sent, pretty-printed (key order and values as sent). */
    payload: string;
    /** The Resend button's accessible name; null when a resend cannot act on this delivery. */
    resendLabel: string | null;
    attempts: {
      attemptNumber: number;
      at: string;
      responseStatus: number | null;
      durationMs: number;
      error: string | null;
      /** The first 2 KB of the answer's body; null without an answer. */
      body: string | null;
      bodyTruncated: boolean;
    }[];
  }[];
  clearHref: string | null;
  olderHref: string | null;
  newestHref: string | null;
};

/** The fields api-webhooks-deliveries.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const API_WEBHOOKS_DELIVERIES_FIELDS = [
  'account',
  'base',
  'problem',
  'endpoint',
  'canResend',
  'filters',
  'filterErrors',
  'filtered',
  'eventChoices',
  'statusChoices',
  'back',
  'resendSince',
  'sinceError',
  'deliveries',
  'clearHref',
  'olderHref',
  'newestHref',
] as const satisfies readonly KeysOf<ApiWebhooksDeliveriesModel>[];

type LogPage = PageData<'api-webhooks-deliveries'>;
export type LogFilterName = 'event' | 'status' | 'from' | 'to';
const FILTER_NAMES: readonly LogFilterName[] = ['event', 'status', 'from', 'to'];

/** The log's own query, as its links and the resend forms carry it back. */
export type LogQuery = Partial<Record<LogFilterName | 'before', string>>;

/** A delivery's status: its badge's words and tone, and how the status filter offers it. */
const STATUS_SHOWN: Record<DeliveryStatus, { words: string; tone: 'ok' | 'bad' | 'wait' | 'muted'; filter: string }> = {
  succeeded: { words: 'Delivered', tone: 'ok', filter: 'Delivered' },
  failed: { words: 'Failed', tone: 'bad', filter: 'Failed (attempts ran out)' },
  pending: { words: 'Pending', tone: 'wait', filter: 'Pending (being sent or retrying)' },
  held: { words: 'Held', tone: 'muted', filter: 'Held (endpoint disabled)' },
};

export const STATUS_CHOICES = (['succeeded', 'failed', 'pending', 'held'] as const).map((value) => ({
  value,
  label: STATUS_SHOWN[value].filter,
}));
export const EVENT_CHOICES = WEBHOOK_EVENT_TYPES.map((value) => ({ value, label: value }));

export function logHref(base: string, query: LogQuery): string {
  const params = new URLSearchParams();
  for (const name of [...FILTER_NAMES, 'before'] as const) {
    const value = query[name];
    if (value) params.set(name, value);
  }
  const search = params.toString();
  return `${base}/deliveries${search ? `?${search}` : ''}`;
}

export interface ReadFilters {
  /** As typed (trimmed; empty ones left out), for the form, the links and the resend forms. */
  typed: Partial<Record<LogFilterName, string>>;
  filters: DeliveryLogFilters;
  before: KeysetCursor | undefined;
  /** What is wrong with each filter, in words, shown next to it. */
  errors: Partial<Record<LogFilterName, string>>;
  /** A problem of the page (an "Older" link that is not one of ours). */
  problem: string | null;
}

/** The filters of a query (the GET form's, or a resend form's); `failed=1` (older links) is status=failed. */
export function readFilters(query: DeliveryLogQuery): ReadFilters {
  const typed: ReadFilters['typed'] = {};
  for (const name of FILTER_NAMES) {
    const value = query[name]?.trim();
    if (value) typed[name] = value;
  }
  if (!typed.status && query.failed === '1') typed.status = 'failed';
  const filters: DeliveryLogFilters = {};
  const errors: ReadFilters['errors'] = {};
  if (typed.event) {
    if (isOneOf(WEBHOOK_EVENT_TYPES, typed.event)) filters.eventType = typed.event;
    else errors.event = `"${typed.event}" is not an event type: choose call.started, call.completed or call.failed.`;
  }
  if (typed.status) {
    if (isOneOf(DELIVERY_STATUSES, typed.status)) filters.status = typed.status;
    else errors.status = `"${typed.status}" is not a delivery status: choose one from the list.`;
  }
  for (const [name, end] of [
    ['from', false],
    ['to', true],
  ] as const) {
    const value = typed[name];
    if (!value) continue;
    const at = parseUtcTime(value, end);
    if (at) filters[name] = at;
    else errors[name] = `"${value}" is not a date: write it as YYYY-MM-DD (or YYYY-MM-DDTHH:MM), in UTC.`;
  }
  if (filters.from && filters.to && filters.from >= filters.to)
    errors.to = 'The date range ends before it starts: choose a "To" day on or after the "From" day.';
  const beforeText = query.before?.trim();
  const before = beforeText ? decodeCursor(beforeText) : undefined;
  return {
    typed,
    filters,
    before: before ?? undefined,
    errors,
    problem: before === null ? 'This link to older deliveries is not valid: the newest deliveries are shown.' : null,
  };
}

/** The query of the page shown (filters as typed, and its cursor): its links and resend forms come back to it. */
export function hereOf(read: ReadFilters): LogQuery {
  return { ...read.typed, ...(read.before ? { before: encodeCursor(read.before) } : {}) };
}

/** A resend form's hidden fields: the query of the page it is on. */
export function backFields(query: LogQuery): { name: string; value: string }[] {
  return Object.entries(query).flatMap(([name, value]) => (value ? [{ name, value }] : []));
}

/** The time 24 hours before `now`, as the "Resend failed since" field (datetime-local, UTC) takes it. */
export function dayBefore(now: Date): string {
  return new Date(now.getTime() - 86_400_000).toISOString().slice(0, 16);
}

/**
 * One delivery as the log shows it, its times as `times` writes them; `canResend`: the endpoint is enabled
 * (replayDelivery refuses otherwise).
 */
export function shownDelivery(d: LoggedDelivery, canResend: boolean, times: ShownTimes): LogPage['deliveries'][number] {
  const shown = STATUS_SHOWN[d.status];
  const at = times.time(d.createdAt);
  const last = d.attempts.at(-1);
  // Pending deliveries are sent without a resend, held ones when the endpoint is enabled again (replayDelivery).
  const resendable = canResend && (d.status === 'succeeded' || d.status === 'failed');
  return {
    id: d.id,
    eventType: d.eventType,
    callId: d.callId,
    callNumber: d.phoneNumber,
    // The call page resolves the call within the viewer's scope, as for any link to it.
    callHref: `/dashboard/calls/${d.callId}`,
    status: d.status,
    statusWords: d.status === 'pending' && d.attempts.length > 0 ? 'Retrying' : shown.words,
    tone: shown.tone,
    at,
    nextAt: d.status === 'pending' ? times.time(d.nextAttemptAt) : null,
    heldReason: d.status === 'held' ? disabledReasonWords(d.heldReason, times) : null,
    lastAnswer: last
      ? `${last.responseStatus === null ? 'no answer' : `HTTP ${last.responseStatus}`} in ${last.durationMs} ms`
      : null,
    payload: reindent(d.payload),
    // The call's id ends in random bits (its start is its creation time, shared by calls made together).
    resendLabel: resendable ? `Resend ${d.eventType} of ${at}, call to ${d.phoneNumber} …${d.callId.slice(-8)}` : null,
    attempts: d.attempts.map((a) => ({
      attemptNumber: a.attemptNumber,
      at: times.time(a.startedAt),
      responseStatus: a.responseStatus,
      durationMs: a.durationMs,
      error: a.error,
      body: a.responseBody,
      bodyTruncated: a.responseBodyTruncated,
    })),
  };
}
