// The calls page's model: what src/views/pages/calls.eta reads (with the partials it includes).
import type { KeysOf } from './model-parts.js';

/**
 * The Calls list's Agent or Client filter: a menu of every one in scope (`menu`), or, in a scope of more than the
 * menu lists, a name to type; `chosen` is the one the filters chose, `choices` those a typed name fits when several do.
 */
export interface CallsFilter {
  menu: { id: string; label: string }[] | null;
  chosen: { id: string; name: string } | null;
  typedName: string;
  choices: { label: string; href: string }[];
}

export type CallsModel = {
  isAgency: boolean;
  /** The zone the From and To dates are read in: the viewer's, or UTC. */
  datesZone: string;
  problems: string[];
  /** The filters as typed, for the form and the links. */
  typed: Partial<
    Record<
      | 'status'
      | 'agent'
      | 'agent_name'
      | 'client'
      | 'client_name'
      | 'from'
      | 'to'
      | 'number'
      | 'name'
      | 'meta_key'
      | 'meta_value'
      | 'outcome'
      | 'call'
      | 'held',
      string
    >
  >;
  filtered: boolean;
  statuses: { value: string; label: string }[];
  /** The outcome labels the viewer's calls have, suggested by the Outcome filter (OUTCOME_SUGGESTIONS at most). */
  outcomes: string[];
  /** The Agent filter (CallsFilter says how it shows). */
  agentFilter: CallsFilter;
  /** The Client filter (agency users). */
  clientFilter: CallsFilter;
  /** The metadata key shown as a column (the viewer's choice), or null. */
  column: string | null;
  /** Where "Export calls with consent (CSV)" goes (a GET form for a period). */
  exportAction: string;
  /** The export's period as the form first offers it: the last 30 days, in the viewer's zone (YYYY-MM-DD). */
  exportFrom: string;
  exportTo: string;
  /** The list's filters as a query string, for the column form to come back to. */
  columnBack: string;
  /** The list's filters and page as a query string, for "Cancel selected calls" to come back to. */
  cancelBack: string;
  /** Where "Cancel selected calls" posts; null when no call of this page still waits. */
  cancelAction: string | null;
  calls: {
    id: string;
    /** Still waiting: it has a box to tick for "Cancel selected calls". */
    cancelable: boolean;
    href: string;
    created: string;
    number: string;
    /** The trigger's name, or empty. */
    name: string;
    agent: string;
    client: string;
    /** "Triggered by <agency> (agency key)" for a call an agency's key placed on a client's agent, else null. */
    triggeredBy: string | null;
    /** The status with its reason, as one badge ("Failed: busy", "Waiting for a slot (#2 in line)"). */
    status: string;
    tone: 'ok' | 'bad' | 'wait' | 'info' | 'muted';
    /** The badge's title: why the call's window is read in its zone (waiting for the window), else null. */
    statusTitle: string | null;
    /** The badge's text in two parts that may go on two lines (a narrow row), or null: one line. */
    statusParts: [string, string] | null;
    /** "Attempt 2 of 3: busy" when more than one attempt was made or is allowed, else null. */
    attempts: string | null;
    /** Each ended attempt's outcome and time, for the attempts line's title; null when none ended. */
    attemptsTitle: string | null;
    /** A machine answered (answered_by machine) and the badge does not say so already. */
    voicemail: boolean;
    duration: string;
    /** The runtime's outcome label, or empty while it has reported none. */
    outcome: string;
    /** The value of the metadata column's key, or empty. */
    columnValue: string;
  }[];
  olderHref: string | null;
  newestHref: string | null;
  clearHref: string | null;
};

/** The fields calls.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CALLS_FIELDS = [
  'isAgency',
  'datesZone',
  'problems',
  'typed',
  'filtered',
  'statuses',
  'outcomes',
  'agentFilter',
  'clientFilter',
  'column',
  'exportAction',
  'exportFrom',
  'exportTo',
  'columnBack',
  'cancelBack',
  'cancelAction',
  'calls',
  'olderHref',
  'newestHref',
  'clearHref',
] as const satisfies readonly KeysOf<CallsModel>[];
