// The call page's model: what src/views/pages/call.eta reads (with the partials it includes).
import type { AccountKind, KeysOf } from './model-parts.js';

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
  'timeline',
  'metadataRows',
  'metadataJson',
  'deliveryLogHref',
  'deliveries',
] as const satisfies readonly KeysOf<CallModel>[];
