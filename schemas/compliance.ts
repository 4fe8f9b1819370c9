// Calling within the law (PRODUCT.md, "Calling within the law"): an agency's calling-rules settings (and a client's
// narrower hours), the trigger's consent record, and the decision record of each attempt that every event carries as
// `compliance`. A leaf beside schemas/calling-rules.ts (the rules themselves) and schemas/call.ts.
import { Type, type Static } from '@sinclair/typebox';
import { AgencyCallingRule, CALL_KINDS, CallKind } from './calling-rules.js';
import { DATE_TIME_PATTERN, NAME_TEXT, Text } from './text.js';

/** The rule sets an agency may switch on: the US (federal and states) and Canada. None leaves its own rules only. */
export const RULE_SETS = ['us', 'ca'] as const;
export type RuleSetName = (typeof RULE_SETS)[number];

/** At most this many own rules per agency, and per client. */
export const OWN_RULES_MAX = 10;
/** The largest cap an agency may set per rolling 24 hours, and per 7 days. */
export const CAP_PER_DAY_MAX = 50;
export const CAP_PER_WEEK_MAX = 200;

export const CAP_SCOPES = ['agency', 'account'] as const;

export const CalleeCap = Type.Object(
  {
    per_24h: Type.Integer({
      minimum: 1,
      maximum: CAP_PER_DAY_MAX,
      description: 'Most dial attempts to one number in any rolling 24 hours (retries count)',
    }),
    per_7d: Type.Union([Type.Integer({ minimum: 1, maximum: CAP_PER_WEEK_MAX }), Type.Null()], {
      description: 'Most dial attempts to one number in any rolling 7 days; null: no weekly cap',
    }),
    scope: Type.Union(
      CAP_SCOPES.map((scope) => Type.Literal(scope)),
      {
        description: 'agency: counted across the agency and all its clients; account: per account',
      },
    ),
  },
  { additionalProperties: false },
);
export type CalleeCapData = Static<typeof CalleeCap>;

/**
 * An agency's calling-rules settings (accounts.calling_rules of an agency). Off by default: today's behaviour. On,
 * every call of the agency and its clients is checked before each attempt (src/compliance/).
 */
export const AgencyCallingRules = Type.Object(
  {
    enabled: Type.Boolean(),
    rule_sets: Type.Array(Type.Union(RULE_SETS.map((set) => Type.Literal(set))), {
      uniqueItems: true,
      description: 'The laws applied; empty: only the agency’s own rules',
    }),
    call_kinds: Type.Array(CallKind, {
      minItems: 1,
      uniqueItems: true,
      description:
        'What the agency’s calls are, which decides the rules that govern them (default: all three, the strictest)',
    }),
    own_rules: Type.Array(AgencyCallingRule, { maxItems: OWN_RULES_MAX }),
    cap: Type.Union([CalleeCap, Type.Null()], { description: 'Caps per callee; null: only the laws’ own caps' }),
    consent_required: Type.Boolean({ description: 'Every trigger of the agency and its clients needs `consent`' }),
  },
  { additionalProperties: false },
);
export type AgencyCallingRulesData = Static<typeof AgencyCallingRules>;

/** What an agency that never chose has: off, and the strictest reading once it switches on. */
export const DEFAULT_AGENCY_CALLING_RULES: AgencyCallingRulesData = {
  enabled: false,
  rule_sets: ['us', 'ca'],
  call_kinds: [...CALL_KINDS],
  own_rules: [],
  cap: null,
  consent_required: false,
};

/** A client's narrower hours (accounts.calling_rules of a client), applied beside its agency's when those are on. */
export const ClientCallingRules = Type.Object(
  { own_rules: Type.Array(AgencyCallingRule, { maxItems: OWN_RULES_MAX }) },
  { additionalProperties: false },
);
export type ClientCallingRulesData = Static<typeof ClientCallingRules>;

export const CONSENT_TYPES = ['express_written', 'express', 'established_business_relationship', 'inquiry'] as const;
export const CONSENT_SOURCE_MAX = 200;
export const CONSENT_EVIDENCE_URL_MAX = 2000;

/** An https link without white space or control characters (the dashboard shows it as a link, the CSV as text). */
export const EVIDENCE_URL_PATTERN = '^https://[^\\s\\u0000-\\u001f\\u007f-\\u009f]+$';

/**
 * The trigger's optional consent record: stored with the call, in every event, exportable for an audit. Its strings
 * are Text (schemas/text.ts): lengths in code points, and a refusal that names the field and the rule.
 */
export const Consent = Type.Object(
  {
    type: Type.Union(
      CONSENT_TYPES.map((type) => Type.Literal(type)),
      { description: `one of ${CONSENT_TYPES.join(', ')}: the kind of consent the callee gave` },
    ),
    obtained_at: Text({
      format: 'date-time',
      pattern: DATE_TIME_PATTERN,
      description: 'When it was obtained (RFC 3339 with an offset; not in the future)',
    }),
    source: Text({
      minLength: 1,
      maxLength: CONSENT_SOURCE_MAX,
      pattern: NAME_TEXT,
      description: `Where it was obtained, e.g. "Web form, example.com/quote": at most ${CONSENT_SOURCE_MAX} characters, no control characters but tab, line feed and carriage return`,
    }),
    evidence_url: Type.Optional(
      Text({
        maxLength: CONSENT_EVIDENCE_URL_MAX,
        pattern: EVIDENCE_URL_PATTERN,
        description: `An https:// link to the evidence (a form submission, a recording): at most ${CONSENT_EVIDENCE_URL_MAX} characters, no white space or control characters`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type ConsentData = Static<typeof Consent>;

export const VERDICTS = ['allowed', 'held', 'refused'] as const;

/** One candidate region and zone as checked. */
export const CandidateRecord = Type.Object(
  {
    region: Type.String({ description: 'ISO 3166-2 region (US-FL) or country (US)' }),
    timezone: Type.String({ description: 'IANA time zone' }),
    local_time: Type.String({ description: 'The callee’s wall clock there, "YYYY-MM-DD HH:MM"' }),
    allowed: Type.Boolean(),
    rule: Type.Union([Type.String(), Type.Null()], {
      description: 'The rule that decided (the first that refused, else the one whose hours end soonest); null: none',
    }),
  },
  { additionalProperties: false },
);

/** The decision record of one attempt: what was checked before it was dialled (or held, or refused), and why. */
export const ComplianceRecord = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    checked_at: Type.String({ format: 'date-time' }),
    verdict: Type.Union(VERDICTS.map((verdict) => Type.Literal(verdict))),
    reasons: Type.Array(Type.String(), {
      description: 'Why not, one line per refusing rule, e.g. "US-FL: 8:00–20:00, 07:42 now in America/New_York"',
    }),
    rules_version: Type.String({ description: 'The version of the rule set checked (calling-rules.json)' }),
    candidates: Type.Array(CandidateRecord),
    cap: Type.Union(
      [
        Type.Object(
          {
            count: Type.Integer({ minimum: 0, description: 'Dial attempts to the number within the window' }),
            limit: Type.Integer({ minimum: 1 }),
            window: Type.String({ pattern: '^[0-9]+h$', description: 'The rolling window in hours, e.g. 24h, 168h' }),
            scope: Type.Union(CAP_SCOPES.map((scope) => Type.Literal(scope))),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The tightest cap checked; null when no cap applies' },
    ),
    do_not_call: Type.Union([Type.Literal('clear'), Type.Literal('listed')]),
    consent: Type.Union([Type.Literal('on_record'), Type.Literal('not_required'), Type.Literal('missing')]),
  },
  { additionalProperties: false },
);
export type ComplianceRecordData = Static<typeof ComplianceRecord>;

/** Why a waiting call is held (calls.held_by). */
export const HELD_BY = ['calling_rules', 'cap'] as const;
export type HeldBy = (typeof HELD_BY)[number];

/** The 400s of the trigger's new rules. */
export const COMPLIANCE_ERRORS = {
  consentRequired: 'Consent is required for this agent',
  outsideHours: 'Outside the permitted calling hours for this number',
  consentInFuture: 'consent.obtained_at must not be in the future',
} as const;
