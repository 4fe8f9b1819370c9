// The shape of the calling rules (src/compliance/calling-rules.json) and of an agency's own narrower rule: data an
// operator edits without code, checked by test/compliance/calling-rules-data.test.ts. A leaf.
import { Type, type Static, type TLiteral } from '@sinclair/typebox';
import { DAY_NAMES } from './calling-window.js';

/** A literal union member by member (a `.map` would widen it to string). */
function literals<const T extends readonly string[]>(values: T): { -readonly [K in keyof T]: TLiteral<T[K]> } {
  return values.map((value) => Type.Literal(value)) as { -readonly [K in keyof T]: TLiteral<T[K]> };
}

/**
 * The regions a rule may name: the two countries, and the ISO 3166-2 subdivisions of each (US: the 50 states, the
 * District of Columbia and the six outlying areas; CA: the 10 provinces and 3 territories).
 */
export const US_SUBDIVISIONS = [
  'AK', 'AL', 'AR', 'AZ', 'CA', 'CO', 'CT', 'DC', 'DE', 'FL', 'GA', 'HI', 'IA', 'ID', 'IL', 'IN', 'KS', 'KY', 'LA',
  'MA', 'MD', 'ME', 'MI', 'MN', 'MO', 'MS', 'MT', 'NC', 'ND', 'NE', 'NH', 'NJ', 'NM', 'NV', 'NY', 'OH', 'OK', 'OR',
  'PA', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VA', 'VT', 'WA', 'WI', 'WV', 'WY',
  'AS', 'GU', 'MP', 'PR', 'UM', 'VI',
] as const; // prettier-ignore
export const CA_SUBDIVISIONS = [
  'AB', 'BC', 'MB', 'NB', 'NL', 'NS', 'ON', 'PE', 'QC', 'SK', 'NT', 'NU', 'YT',
] as const; // prettier-ignore
export const REGIONS: readonly string[] = [
  'US',
  'CA',
  ...US_SUBDIVISIONS.map((code) => `US-${code}`),
  ...CA_SUBDIVISIONS.map((code) => `CA-${code}`),
];

/**
 * What a rule governs. A rule lists every kind a call must have for it to apply: `["telephone_solicitation",
 * "automated"]` is an automated solicitation; a sales call by an AI voice agent is both.
 */
export const CALL_KINDS = ['telephone_solicitation', 'telemarketing', 'automated'] as const;
export const CallKind = Type.Union(literals(CALL_KINDS), {
  description:
    'telephone_solicitation: an unsolicited call to sell, lease or rent, as the cited law defines it; telemarketing: ' +
    'the same under a telemarketing law (FTC TSR, CRTC rules); automated: dialled automatically, or playing a ' +
    'prerecorded, synthesized or artificial voice (an AI voice agent)',
});

const DAY = Type.Union(literals(DAY_NAMES));

/** A calendar day, YYYY-MM-DD (the data test also checks that the day exists). */
export const DATE_PATTERN = '^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$';

/** A clock time of the callee's day, "HH:MM" in 24 h. */
export const CLOCK_TIME_PATTERN = '^(?:[01][0-9]|2[0-3]):[0-5][0-9]$';
/** An end of allowed time: a clock time, or "24:00" for a day that runs to midnight. */
export const END_TIME_PATTERN = '^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$';

export const TimeRange = Type.Object(
  {
    start: Type.String({ pattern: CLOCK_TIME_PATTERN, description: 'First allowed minute, callee local time' }),
    end: Type.String({
      pattern: END_TIME_PATTERN,
      description: 'End of the allowed time (exclusive: a dial at this minute is outside); after start',
    }),
  },
  { additionalProperties: false },
);
export type TimeRangeData = Static<typeof TimeRange>;

/** Allowed hours per weekday; a day that is absent allows no call and must be listed in `days_not_allowed`. */
export const WeekHours = Type.Partial(
  Type.Object({
    mon: TimeRange,
    tue: TimeRange,
    wed: TimeRange,
    thu: TimeRange,
    fri: TimeRange,
    sat: TimeRange,
    sun: TimeRange,
  }),
  { additionalProperties: false },
);

const Month = Type.Integer({ minimum: 1, maximum: 12 });

/** How a holiday's date is found in a given year. */
export const HolidayDate = Type.Union([
  Type.Object(
    {
      kind: Type.Literal('fixed'),
      month: Month,
      day: Type.Integer({ minimum: 1, maximum: 31 }),
    },
    { additionalProperties: false, description: 'The same date every year, e.g. July 4' },
  ),
  Type.Object(
    {
      kind: Type.Literal('nth_weekday'),
      month: Month,
      weekday: DAY,
      n: Type.Union(
        [1, 2, 3, 4, 5, -1].map((n) => Type.Literal(n)),
        {
          description: 'Which one of the month: 1 the first, 4 the fourth, -1 the last',
        },
      ),
    },
    { additionalProperties: false, description: 'e.g. the third Monday of January' },
  ),
  Type.Object(
    {
      kind: Type.Literal('easter_offset'),
      days: Type.Integer({
        minimum: -60,
        maximum: 60,
        description: 'Days after Western Easter Sunday (-2: Good Friday)',
      }),
    },
    { additionalProperties: false, description: 'A day fixed relative to Western (Gregorian) Easter' },
  ),
]);

/**
 * Days a statute also names when a holiday falls near or on a weekend. The holiday's own date stays not allowed too:
 * where "the holiday" moves, calling on either day is the strict reading.
 */
export const OBSERVANCES = [
  'saturday_to_friday',
  'saturday_to_monday',
  'sunday_to_monday',
  'midweek_to_preceding_monday',
] as const;

export const Holiday = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    date: HolidayDate,
    offset_days: Type.Optional(
      Type.Integer({ minimum: -7, maximum: 7, description: 'Days added to the date found (Election Day: +1)' }),
    ),
    years: Type.Optional(Type.Union([Type.Literal('even'), Type.Literal('odd')], { description: 'Only these years' })),
    also_observed: Type.Optional(
      Type.Array(Type.Union(literals(OBSERVANCES)), {
        uniqueItems: true,
        description:
          'saturday_to_friday / saturday_to_monday / sunday_to_monday: the weekday named when the date is a weekend ' +
          'day; midweek_to_preceding_monday: the Monday before when the date is Tuesday to Friday',
      }),
    ),
    note: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type HolidayData = Static<typeof Holiday>;

export const CallCap = Type.Object(
  {
    count: Type.Integer({ minimum: 1, description: 'Most calls allowed in the window' }),
    window_hours: Type.Integer({ minimum: 1, description: 'The rolling window, in hours' }),
    scope: Type.Union([Type.Literal('same_subject'), Type.Literal('any_subject')], {
      description: 'same_subject: the count is of calls to one person on the same subject matter or issue',
    }),
    note: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** Where a rule comes from. `url` is where its words were read; `source` says what that page is. */
export const Citation = Type.Object(
  {
    law: Type.String({ minLength: 1, description: 'The act, code or rules' }),
    section: Type.String({ minLength: 1, description: 'The section (and subsection) that sets the rule' }),
    url: Type.String({ pattern: '^https?://[^\\s]+$', description: 'Where the rule was read' }),
    checked: Type.String({ pattern: DATE_PATTERN, description: 'When it was read (YYYY-MM-DD)' }),
    source: Type.Union([Type.Literal('official_text'), Type.Literal('text_copy'), Type.Literal('summary')], {
      description:
        "official_text: the legislature's or regulator's own text; text_copy: the text on a third-party site; " +
        'summary: a description of the law (regulator, law firm, vendor), not its text',
    }),
    official_url: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
    note: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const RuleBody = {
  applies_to: Type.Array(CallKind, { minItems: 1, uniqueItems: true }),
  hours: WeekHours,
  days_not_allowed: Type.Array(DAY, { uniqueItems: true, description: 'Weekdays with no calls at all' }),
  holidays: Type.Array(Holiday, { description: 'Days with no calls at all' }),
  cap: Type.Optional(CallCap),
};

export const CallingRule = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$', description: 'Stable name, e.g. us-fl-501-616' }),
    region: Type.Union(
      REGIONS.map((region) => Type.Literal(region)),
      { description: 'ISO 3166-2 subdivision (US-FL, CA-QC) or the country (US, CA) for a national rule' },
    ),
    ...RuleBody,
    holidays_complete: Type.Boolean({
      description: 'false: the law bans holidays but `holidays` may miss some (see open_questions)',
    }),
    effective_from: Type.Optional(Type.String({ pattern: DATE_PATTERN, description: 'The law applies from this day' })),
    citation: Citation,
    summary: Type.String({ minLength: 1, description: 'The rule in plain English' }),
    open_questions: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  },
  { additionalProperties: false },
);
export type CallingRuleData = Static<typeof CallingRule>;

export const CallingRules = Type.Object(
  {
    $comment: Type.Optional(Type.String()),
    version: Type.String({ pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$', description: 'Raised on every change' }),
    effective_date: Type.String({ pattern: DATE_PATTERN, description: 'The day this version describes the law as of' }),
    rules: Type.Array(CallingRule, { minItems: 1 }),
  },
  { additionalProperties: false },
);
export type CallingRulesData = Static<typeof CallingRules>;

/**
 * An agency's own narrower hours (e.g. 10:00-18:00 callee's time, no Sundays), kept per agency in the database: the
 * same hours, days, holidays and cap as a law's rule, with no region (it follows the callee) and no citation.
 */
export const AgencyCallingRule = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    ...RuleBody,
  },
  { additionalProperties: false },
);
export type AgencyCallingRuleData = Static<typeof AgencyCallingRule>;
