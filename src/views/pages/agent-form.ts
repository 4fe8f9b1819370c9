// The agent-form page's model: what src/views/pages/agent-form.eta reads (with the partials it includes).
import type { AccountKind, KeysOf, Problem } from './model-parts.js';
import type { HANDOFF_RULES, HandoffValues } from './agent-form-handoff.js';

export type AgentFormModel = {
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
    /** on or off. */
    consentRequired: string;
  } & HandoffValues;
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
    handoff: typeof HANDOFF_RULES;
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

/** The fields agent-form.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const AGENT_FORM_FIELDS = [
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
] as const satisfies readonly KeysOf<AgentFormModel>[];
