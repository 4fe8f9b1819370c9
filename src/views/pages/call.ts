// The call page's model: what src/views/pages/call.eta reads (with the partials it includes).
import { storedOutcomes } from '../format/badge.js';
import type { ActiveUser } from '../../storage/index.js';
import type { CallDetail } from '../../storage/index.js';
import { metadataRows, reindent, timeline } from './call-timeline.js';
import {
  ANSWERED_BY_WORDS,
  ATTEMPT_OUTCOME_WORDS,
  REASON_WORDS,
  STATUS_WORDS,
  TIMEZONE_SOURCE_WORDS,
} from '../format/status.js';
import { cannotCancelWords, deliveryStatusWords, disabledReasonWords } from '../format/notices.js';
import type { ShownTimes } from '../format/shown-times.js';
import { formatDuration, waitingWords } from '../format/time.js';
import { attemptsDialled } from '../../calls/call-view.js';
import { resultView, type ResultView } from '../format/result.js';
import type { PageData } from '../page-models.js';
import type { AccountKind, KeysOf } from './model-parts.js';
import { callCompliance, type CallComplianceView } from './call-compliance.js';
import { holdReason } from '../../domain/stored-compliance.js';

/** A call's number and the do-not-call lists that cover it (its account's, its agency's). */
export interface CallDoNotCall {
  /** Where the number is listed, in words (which list, since when, by whom, why); null when on neither list. */
  listed: string | null;
  /** Where "Add this number to the do-not-call list" posts (the call's account's list); null once it is listed. */
  addAction: string | null;
  /** The list's name as the button's hint says it. */
  listName: string;
  /** The page of the list that holds (or would hold) it, when the viewer manages that list. */
  listHref: string | null;
}

export type CallModel = {
  call: {
    id: string;
    phoneNumber: string;
    fromNumber: string;
    agent: string;
    account: string;
    accountKind: AccountKind;
    name: string | null;
    email: string | null;
    status: string;
    statusClass: string;
    reason: string | null;
    created: string;
    duration: string;
    /** Why it has not been dialled yet; null unless it waits. */
    waiting: string | null;
    /** Attempts dialled, in words ("2 of at most 3"). */
    attempts: string;
    scheduled: string | null;
    answeredBy: string | null;
    /** Set when it ended on a machine: whether a message was left. */
    voicemailLeft: string | null;
    /** The zone its calling window is read in, and why that zone. */
    timezone: string | null;
    /** "Triggered by <agency> (agency key)" for a call an agency's key placed on a client's agent, else null. */
    triggeredBy: string | null;
    /** Set for a client's user on such a call: whose endpoint its webhook events go to (its deliveries are not shown). */
    eventsGoTo: string | null;
  };
  /** Each finished attempt, oldest first. */
  attemptOutcomes: { attempt: number; outcome: string; at: string }[];
  /** Where "Cancel this call" posts; null when the call no longer waits. */
  cancelAction: string | null;
  /** Why the call cannot be canceled any more (dialling, in progress, ended); null when it can be or was canceled. */
  cannotCancel: string | null;
  doNotCall: CallDoNotCall;
  /** The "Calling rules" section: consent, declared region, each attempt's decision record; null: none to show. */
  compliance: CallComplianceView | null;
  /** What the voice-agent runtime reported (outcome, summary, data, transcript, links), with when; null: nothing. */
  result: (ResultView & { received: string }) | null;
  timeline: { at: string; what: string; detail: string }[];
  /** Null when the metadata is not a JSON object (then only the JSON is shown). */
  metadataRows: { key: string; kind: string; value: string }[] | null;
  metadataJson: string;
  deliveryLogHref: string;
  deliveries: {
    id: string;
    eventType: string;
    status: string;
    statusWords: string;
    next: string | null;
    heldReason: string | null;
    resendAction: string;
    attempts: { number: number; at: string; httpStatus: string; latency: string; error: string }[];
  }[];
};

/** The fields call.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CALL_FIELDS = [
  'call',
  'attemptOutcomes',
  'cancelAction',
  'cannotCancel',
  'doNotCall',
  'compliance',
  'result',
  'timeline',
  'metadataRows',
  'metadataJson',
  'deliveryLogHref',
  'deliveries',
] as const satisfies readonly KeysOf<CallModel>[];

/** Where the delivery log of the call's account lives: the viewer's own settings, or (agency users) a client's. */
function deliveryLogBase(viewer: ActiveUser, accountId: string): string {
  return accountId === viewer.accountId
    ? '/dashboard/settings/api-webhooks'
    : `/dashboard/clients/${accountId}/api-webhooks`;
}

/** How many attempts were dialled and, while the call waits for a retry, which attempt is next. */
function attemptsWords(call: CallDetail, ended: number): string {
  const dialled = attemptsDialled({ ...call, attemptsEnded: ended });
  if (call.status === 'initiated' && call.attempt > 1) return `${dialled} so far; attempt ${call.attempt} is next`;
  return String(dialled);
}

/**
 * The call page's model: the call, its attempts, timeline, metadata and deliveries, as `viewer` sees them, its times
 * as `times` writes them.
 */
export function callPage(
  viewer: ActiveUser,
  call: CallDetail,
  now: Date,
  doNotCall: CallDoNotCall,
  times: ShownTimes,
): PageData<'call'> {
  const log = deliveryLogBase(viewer, call.accountId);
  // Listed for a client (an agency's key on its agent): a client's user sees it, not the agency's deliveries.
  const triggeredBy = call.listedFor ? `${call.account.name} (agency key)` : null;
  const eventsElsewhere =
    call.listedFor !== null && call.accountId !== viewer.accountId && viewer.accountKind === 'client';
  const rows = metadataRows(call.metadata);
  const result = resultView(call.result);
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
      created: times.time(call.createdAt),
      duration: formatDuration(call.durationSeconds),
      waiting: waitingWords({ ...call, heldReason: holdReason(call.compliance) }, now, call.timezone, times),
      attempts: attemptsWords(call, outcomes.length),
      scheduled: call.scheduledAt ? times.withLocal(call.scheduledAt, call.timezone) : null,
      answeredBy: call.answeredBy ? ANSWERED_BY_WORDS[call.answeredBy] : null,
      voicemailLeft: call.voicemailLeft === null ? null : call.voicemailLeft ? 'Yes' : 'No',
      timezone: call.timezone
        ? `${call.timezone} (${call.timezoneSource ? TIMEZONE_SOURCE_WORDS[call.timezoneSource] : "the agent's"})`
        : null,
    },
    attemptOutcomes: outcomes.map((o) => ({
      attempt: o.attempt,
      outcome: ATTEMPT_OUTCOME_WORDS[o.outcome] ?? o.outcome,
      at: times.withLocal(new Date(o.at), call.timezone),
    })),
    cancelAction: call.status === 'initiated' ? `/dashboard/calls/${call.id}/cancel` : null,
    cannotCancel: cannotCancelWords(call.status, call.failureReason),
    doNotCall,
    compliance: callCompliance(call, times),
    result: result && { ...result, received: times.time(new Date(result.receivedAt)) },
    timeline: timeline(call, now, times),
    metadataRows: rows,
    metadataJson: rows === null ? call.metadata : reindent(call.metadata),
    deliveryLogHref: `${log}/deliveries`,
    deliveries: (eventsElsewhere ? [] : deliveries).map((d) => ({
      id: d.id,
      eventType: d.eventType,
      status: d.status,
      statusWords: deliveryStatusWords(d.status),
      next: d.status === 'pending' ? times.time(d.nextAttemptAt) : null,
      heldReason: d.status === 'held' ? disabledReasonWords(d.heldReason, times) : null,
      resendAction: `${log}/deliveries/${d.id}/resend`,
      attempts: d.attempts.map((a) => ({
        number: a.attemptNumber,
        at: times.time(a.startedAt),
        httpStatus: a.responseStatus === null ? '-' : String(a.responseStatus),
        latency: `${a.durationMs} ms`,
        error: a.error ?? '',
      })),
    })),
  };
}
