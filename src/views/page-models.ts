// What each dashboard template reads: one model type per template (src/views/<name>.eta, with the partials it
// includes), so `reply.page('calls', model)` does not compile when the model and the template disagree. The layout's
// own fields are the layout model, which `reply.page` adds (plugins/dashboard/pages.ts). PAGE_FIELDS lists the same
// fields at run time: test/dashboard/page-models.test.ts compares them with the `it.*` the templates read.
import type { ActiveUser } from '../storage/index.js';

type AccountKind = 'agency' | 'client';

/** What the layout (src/views/layout.eta) reads besides the page's body: `title` from the page, the rest added. */
export interface LayoutModel {
  /** The page's <title> and heading. */
  title: string;
  viewer: ActiveUser | null;
  navigation: { label: string; href?: string; current: boolean }[];
  /** Makes the CSRF token (and sets its cookie) only when a template has a form. */
  csrf: () => string;
  hasSession: boolean;
  flash: { kind: 'ok' | 'error'; text: string } | null;
  /** The page's own URL (path and query string): where its live refresh asks for it again. */
  pageUrl: string;
  /**
   * From the page: absent, a page that never refreshes itself; true, one showing a call still initiated, dialling or
   * in progress, which asks for itself again every few seconds (src/views/assets/live.js); false, one that could but
   * need not (the refreshed copy of a page whose calls have ended: polling stops there).
   */
  live?: boolean;
}

/** Set on every dashboard reply by plugins/mailer.ts (`mailEnabledLocals`): whether the service sends e-mail. */
export interface PageLocals {
  mailEnabled: boolean;
}

/**
 * The Calls list's Agent or Client filter: a menu of every one in scope (`menu`), or, in a scope of more than the
 * menu lists, a name to type; `chosen` is the one the filters chose, `choices` those a typed name fits when several do.
 */
interface CallsFilter {
  menu: { id: string; label: string }[] | null;
  chosen: { id: string; name: string } | null;
  typedName: string;
  choices: { label: string; href: string }[];
}

/** A form's problem, or null. */
type Problem = string | null;

/**
 * The Agents or Clients list's name filter, count line and Previous/Next links (src/views/list-filter.eta and
 * list-pager.eta; made by src/routes/dashboard/list-page.ts). Everything on one page and no filter: only the table.
 */
export interface NamedList {
  /** The list's own page: the filter form's action, and "Show all ..." (the list without a filter). */
  path: string;
  /** What the list holds, plural and lowercase ("agents"): the filter form's label and its links' words. */
  many: string;
  /** The name filter as it is applied (blanks around it dropped); empty: none. */
  name: string;
  /** The most characters the filter takes. */
  maxLength: number;
  /** Whether the filter form shows: the list (or a section of the page) is longer than a page, or it is filtered. */
  filterShown: boolean;
  /** What was wrong with the query string, each with what the page shows instead. */
  problems: string[];
  /** "Agents 51–100 of 1,001", with the filter's words when filtered; null with no filter on a single page. */
  count: string | null;
  previousHref: string | null;
  nextHref: string | null;
}
interface PasswordPolicy {
  min: number;
  max: number;
}
/** The account a section of API & Webhooks is about. */
interface SectionAccount {
  id: string;
  name: string;
  kind: AccountKind;
}
interface ApiWebhooksPlace {
  account: SectionAccount;
  /** The section's own page: /dashboard/settings/api-webhooks or a client's. */
  base: string;
}
/** The "from" of a people form: the page it was on. */
type PeopleFrom = 'users' | 'client';

export interface PersonRow {
  id: string;
  email: string;
  accountName: string;
  status: string;
  created: string;
  lastSignIn: string;
  /** Whether the viewer gets a Disable button for this user (an agency user; not themselves; not disabled yet). */
  canDisable: boolean;
  /** "New sign-in link": the same users as Disable (a disabled user is enabled first). */
  canLink: boolean;
  /** "Enable": an agency user, for a disabled user. */
  canEnable: boolean;
  isViewer: boolean;
}

/** The invitation form (src/views/users-invite-form.eta). */
export interface InviteFormModel {
  invite: {
    accounts: { id: string; name: string }[];
    account: string;
    email: string;
    problem: Problem;
    mailEnabled: boolean;
  };
  from: PeopleFrom;
}

/** The users table (src/views/users-table.eta). */
export interface UsersTableModel {
  people: PersonRow[];
  showAccount: boolean;
  canManage: boolean;
  from: PeopleFrom;
}

/** A one-time link, shown once. */
interface OneTimeLink {
  email: string;
  accountName: string;
  link: string;
  expires: string;
  emailedTo: string | null;
}

interface EndpointState {
  url: string;
  enabled: boolean;
  disabledReason: string | null;
}

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

export interface PageModels {
  account: { lastSignIn: string | null; policy: PasswordPolicy; problem: Problem };
  'agent-form': {
    action: string;
    agent: {
      id: string;
      accountName: string;
      isDefault: boolean;
      defaultWithoutPhone: boolean;
      defaultOf: string;
      /** The retry policy, voicemail setting and calling-hours zone in words. */
      summary: { label: string; words: string }[];
      /** When it was archived, in words; null: in use. */
      archivedAt: string | null;
      /** A ready trigger request naming this agent (the service's base URL, a placeholder for the key). */
      curl: string;
      /** The self-signed certificate's file the example could trust with --cacert (it says -k); null: a real one. */
      certificate: string | null;
    } | null;
    values: {
      name: string;
      phone: string;
      timezone: string;
      policy: string;
      account: string;
      /** Each window row: its ticked days (mon..sun) and times (HH:MM, or empty). */
      rows: { days: string[]; from: string; to: string }[];
      windowTimezone: string;
      maxAttempts: string;
      retryOn: string[];
      retryWaits: string;
      voicemail: string;
      voicemailMessage: string;
    };
    /** The country a caller ID typed without its country code is read in, in words: "United States (+1)". */
    phoneCountry: string;
    /** The choices and bounds the form states (src/routes/dashboard/agent-form.ts FORM_RULES). */
    rules: {
      attempts: string[];
      outcomes: { value: string; words: string }[];
      voicemail: { value: string; words: string }[];
      days: { value: string; short: string; long: string }[];
      maxRows: number;
      waitsMax: number;
      waitMax: number;
      messageMax: number;
      placeholder: string;
    };
    /** The time zones offered: UTC, the canonical names by region, and a stored zone the list lacks (else null). */
    zones: {
      utcAliases: string[];
      regions: { region: string; zones: { value: string; place: string; aliases: string[] }[] }[];
      other: string | null;
    };
    /** A new agent's fresh form: a script may choose the browser's zone (no script: UTC). */
    browserZone: boolean;
    accounts: { id: string; name: string; kind: AccountKind }[];
    /** A problem with the whole form (shown at its top), else null. */
    problem: Problem;
    /** Each field's problem in words, by the field's id (name, phone, w0-days, ...); empty when none. */
    errors: Record<string, string>;
  };
  agents: {
    showAccount: boolean;
    agents: {
      id: string;
      name: string;
      accountName: string;
      accountKind: AccountKind;
      phone: string | null;
      timezone: string;
      windows: string[];
      policy: string;
      /** Calling hours are read in the callee's time zone (else the agent's). */
      calleeHours: boolean;
      /** The retry policy in words. */
      attempts: string;
      /** What happens when a machine answers, in words (a long message cut short). */
      voicemail: string;
      isDefault: boolean;
    }[];
    /** The archived agents (new triggers cannot use them; their calls keep them), by name: a page's worth at most. */
    archived: { id: string; name: string; accountName: string; accountKind: AccountKind; archivedAt: string }[];
    /** The archived agents (of the name filter's) left out of `archived`: the name filter finds them. */
    archivedMore: number;
    list: NamedList;
  };
  'api-webhooks': ApiWebhooksPlace & {
    clientHref: string | null;
    planAllows: boolean;
    planMessage: string | null;
    key: { prefix: string; createdAt: string | null; lastUsed: string | null } | null;
    access: { on: boolean; agencyOff: boolean; agencyName: string | null };
    agents: { id: string; label: string; phone: string | null }[];
    agentsCapped: boolean;
    defaultAgentId: string | null;
    defaultAgentWithoutPhone: boolean;
    endpoint:
      | (EndpointState & {
          updatedAt: string | null;
          pending: number;
          failed: number;
          held: number;
          heldSince: string | null;
        })
      | null;
    /** A form's problem, shown next to the form of that section. */
    problem: { section: 'access' | 'agent' | 'webhook'; text: string } | null;
  };
  /** `affected`: the first names (by name) of the `affectedTotal` clients whose keys stop too. */
  'api-webhooks-access': ApiWebhooksPlace & { affected: string[]; affectedTotal: number };
  'api-webhooks-deliveries': ApiWebhooksPlace & {
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
  'api-webhooks-key': ApiWebhooksPlace & {
    key: { prefix: string; createdAt: string } | null;
    /** The key id the form is made for, or "none". */
    replaces: string;
    planMessage: string | null;
    problem: Problem;
  };
  /** A new key or signing secret, shown once; `value` null: that form was sent before (`already` says so). */
  'api-webhooks-secret': ApiWebhooksPlace &
    (
      | { what: 'key'; value: string; replaced: boolean; already: null }
      | { what: 'secret'; value: string; url: string; already: null }
      | { what: 'key' | 'secret'; value: null; already: string }
    );
  'api-webhooks-webhook': ApiWebhooksPlace & {
    url: string;
    exists: boolean;
    /** The endpoint version the form is made for (epoch ms), or "none". */
    replaces: string;
    maxLength: number;
    problem: Problem;
  };
  'audit-log': {
    showAccount: boolean;
    entries: { at: string; who: string; accountName: string; what: string; detail: string; ip: string | null }[];
    olderHref: string | null;
    newestHref: string | null;
  };
  call: {
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
  calls: {
    isAgency: boolean;
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
        | 'call',
        string
      >
    >;
    filtered: boolean;
    statuses: { value: string; label: string }[];
    /** The Agent filter (CallsFilter says how it shows). */
    agentFilter: CallsFilter;
    /** The Client filter (agency users). */
    clientFilter: CallsFilter;
    /** The metadata key shown as a column (the viewer's choice), or null. */
    column: string | null;
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
      /** The value of the metadata column's key, or empty. */
      columnValue: string;
    }[];
    olderHref: string | null;
    newestHref: string | null;
    clearHref: string | null;
  };
  /** The step before cancelling waiting calls (src/routes/dashboard/call-cancel.ts): its title asks how many. */
  'cancel-confirm': {
    /** Where the button posts (the form's own action, with confirm=yes). */
    action: string;
    /** The calls the list's form cancels (those still waiting), carried to the second POST; empty for one call's. */
    callIds: string[];
    /** The list's query string to come back to (the list's form), or null (one call's form). */
    back: string | null;
    /** What becomes of the calls, in words. */
    consequence: string;
    /** Ticked calls that no longer wait and stay as they are, in words; null when none. */
    notWaiting: string | null;
    confirmLabel: string;
    /** Where "Keep …" goes back to, cancelling nothing. */
    keepHref: string;
    keepLabel: string;
  };
  client: UsersTableModel &
    InviteFormModel & {
      client: {
        name: string;
        agencyName: string;
        plan: string | null;
        created: string;
        access: string;
        keyPrefix: string | null;
        webhookSet: boolean;
      };
      apiWebhooksHref: string;
      sections: { label: string; href: string | null }[];
    };
  clients: {
    agencyOff: boolean;
    clients: {
      href: string;
      name: string;
      created: string;
      access: string;
      keyPrefix: string | null;
      webhookSet: boolean;
      activeUsers: number;
    }[];
    list: NamedList;
    form: { name: string; problem: Problem; maxLength: number };
  };
  'choose-account': { choices: { userId: string; accountName: string }[]; problem: Problem };
  /** keptForm: a form sent meanwhile waits in the session and comes back filled in. */
  'confirm-password': { next: string; keptForm: boolean; problem: Problem };
  'do-not-call': {
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
  error: { message: string };
  'forgot-password': { email: string; problem: Problem };
  'forgot-password-sent': { email: string };
  'link-unusable': { message: string };
  overview: {
    /** Whether the endpoint warnings are announced (role="alert"): on a page load, not on each live refresh. */
    announce: boolean;
    /** The five steps to a first call, each done or linking to where it is taken; null once all are done. */
    checklist: { label: string; done: boolean; href: string; hint: string }[] | null;
    rows: {
      name: string;
      kind: AccountKind;
      active: number;
      waiting: number;
      waitingForWindow: number;
      scheduled: number;
      waitingForRetry: number;
      completed: number;
      failed: number;
      failures: { reason: string; count: number }[];
      /** The Calls list filtered to each number's calls (active links to those connected: one status a filter). */
      links: { active: string; waiting: string; completed: string; failed: string };
      endpoint:
        | (EndpointState & {
            lastSuccess: string | null;
            failuresLastHour: number;
            /** Enabled, but attempts of the last hour failed: a warning, not a green "Enabled". */
            failing: boolean;
            settingsHref: string;
            /** Its delivery log, failed deliveries only. */
            logHref: string;
          })
        | null;
    }[];
    /**
     * The clients left out of `rows` (an agency of more than the Overview lists), and how many of them have calls
     * under way or waiting; null when every account is shown.
     */
    notShown: { count: number; underWay: number } | null;
    limit: number;
    maxWaiting: number;
    /** The UTC day "today" is, YYYY-MM-DD. */
    today: string;
    asOf: string;
    perClient: boolean;
  };
  'set-password': { email: string; action: string; policy: PasswordPolicy; problem: Problem };
  'sign-in': { email: string; next: string; problem: Problem };
  /** The invitation link once made, or the form again with its problem. */
  'users-invite': { back: string } & ({ invited: OneTimeLink } | ({ invited: null } & InviteFormModel));
  'users-link': { made: OneTimeLink; back: string };
  users: UsersTableModel & InviteFormModel & { problem: Problem };
}

export type PageName = keyof PageModels;

/** What a page passes to `reply.page`: its template's model, its title and whether it is live (reply.page adds the rest). */
export type PageData<K extends PageName> = PageModels[K] & Pick<LayoutModel, 'title' | 'live'>;

/** Every key of every member of a union (keyof a union is only the keys they share). */
type KeysOf<T> = T extends unknown ? keyof T : never;

/** Fields the layout model gives every template (`body` is Eta's: the page rendered inside the layout). */
export const LAYOUT_FIELDS = [
  'title',
  'viewer',
  'navigation',
  'csrf',
  'hasSession',
  'flash',
  'pageUrl',
  'live',
  'body',
] as const;
/** Fields of the reply's locals (PageLocals). */
export const LOCALS_FIELDS = ['mailEnabled'] as const satisfies readonly (keyof PageLocals)[];

/** Each model's fields, at run time; `satisfies` and the check below keep it equal to the types. */
export const PAGE_FIELDS = {
  account: ['lastSignIn', 'policy', 'problem'],
  'agent-form': [
    'action',
    'agent',
    'values',
    'phoneCountry',
    'rules',
    'zones',
    'browserZone',
    'accounts',
    'problem',
    'errors',
  ],
  agents: ['showAccount', 'agents', 'archived', 'archivedMore', 'list'],
  'api-webhooks': [
    'account',
    'base',
    'clientHref',
    'planAllows',
    'planMessage',
    'key',
    'access',
    'agents',
    'agentsCapped',
    'defaultAgentId',
    'defaultAgentWithoutPhone',
    'endpoint',
    'problem',
  ],
  'api-webhooks-access': ['account', 'base', 'affected', 'affectedTotal'],
  'api-webhooks-deliveries': [
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
  ],
  'api-webhooks-key': ['account', 'base', 'key', 'replaces', 'planMessage', 'problem'],
  'api-webhooks-secret': ['account', 'base', 'what', 'value', 'replaced', 'url', 'already'],
  'api-webhooks-webhook': ['account', 'base', 'url', 'exists', 'replaces', 'maxLength', 'problem'],
  'audit-log': ['showAccount', 'entries', 'olderHref', 'newestHref'],
  call: [
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
  ],
  calls: [
    'isAgency',
    'problems',
    'typed',
    'filtered',
    'statuses',
    'agentFilter',
    'clientFilter',
    'column',
    'columnBack',
    'cancelBack',
    'cancelAction',
    'calls',
    'olderHref',
    'newestHref',
    'clearHref',
  ],
  'cancel-confirm': ['action', 'callIds', 'back', 'consequence', 'notWaiting', 'confirmLabel', 'keepHref', 'keepLabel'],
  client: ['people', 'showAccount', 'canManage', 'from', 'invite', 'client', 'apiWebhooksHref', 'sections'],
  clients: ['agencyOff', 'clients', 'list', 'form'],
  'choose-account': ['choices', 'problem'],
  'confirm-password': ['next', 'keptForm', 'problem'],
  'do-not-call': [
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
  ],
  error: ['message'],
  'forgot-password': ['email', 'problem'],
  'forgot-password-sent': ['email'],
  'link-unusable': ['message'],
  overview: ['announce', 'checklist', 'rows', 'notShown', 'limit', 'maxWaiting', 'today', 'asOf', 'perClient'],
  'set-password': ['email', 'action', 'policy', 'problem'],
  'sign-in': ['email', 'next', 'problem'],
  'users-invite': ['back', 'invited', 'invite', 'from'],
  'users-link': ['made', 'back'],
  users: ['people', 'showAccount', 'canManage', 'from', 'invite', 'problem'],
} as const satisfies { [K in PageName]: readonly KeysOf<PageModels[K]>[] };

/** Compiles only when every field of every model is in PAGE_FIELDS (the `satisfies` above checks the other way). */
type Missing = { [K in PageName]: Exclude<KeysOf<PageModels[K]>, (typeof PAGE_FIELDS)[K][number]> }[PageName];
const everyFieldListed: [Missing] extends [never] ? true : Missing = true;
void everyFieldListed;
