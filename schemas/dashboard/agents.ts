// The Agents pages' forms. The schema states each field's syntax: a phone number's characters, a time zone that is not
// blank, an account id, each calling window row's day boxes and times, the button pressed, the attempts, the outcomes
// retried, the waits between attempts, the voicemail message's characters. What needs more than a pattern (the
// number as a number of its country, the zone existing, a window's start differing from its end, a row with one time
// only, the message's length and placeholder, settings that contradict each other) is checked by the page in plain
// words next to each field (src/routes/dashboard/agent-form.ts), and again by src/admin/agents.ts on save.
import { Type, type Static, type TLiteral } from '@sinclair/typebox';
import { RETRY_WAIT_MAX_MINUTES, RETRY_WAITS_MAX, VOICEMAIL_NAME_PLACEHOLDER } from '../agent-settings.js';
import { DAY_NAMES, EVERY_DAY } from '../calling-window.js';
import { UUID_PATTERN } from '../uuid.js';
import {
  MAX_ATTEMPTS,
  RETRYABLE_OUTCOMES,
  VOICEMAIL_MESSAGE_MAX,
  VOICEMAIL_POLICIES,
  WINDOW_TIMEZONES,
} from '../vocabulary.js';
import { handoffFields } from './agent-handoff.js';
import { blankOr, Form } from './forms.js';

/** E.164: "+", a country code, at most 15 digits in all (src/domain/phone-number.ts's E164_PATTERN, unanchored). */
export const E164 = '\\+[1-9]\\d{1,14}';
/**
 * A caller ID as typed (src/domain/typed-phone-number.ts reads it): ASCII digits, blanks and the separators people
 * write, a plus among them; the domain says which of these are numbers (the plus first, a possible length).
 */
export const TYPED_NUMBER = '[\\d\\s().+/-]*';
/** The time a window opens at: HH:MM, 00:00 to 23:59, two digits each (as src/domain/calling-window.ts reads it). */
export const OPEN_TIME = '(?:[01]\\d|2[0-3]):[0-5]\\d';
/** The time a window closes at: as it opens, or 24:00 (the end of the day). */
export const CLOSE_TIME = `(?:${OPEN_TIME}|24:00)`;
/** A day token as the domain reads it: in any case, blanks anywhere (it lowercases and drops every blank). */
const token = (word: string) => [...word].map((c) => `[${c}${c.toUpperCase()}]`).join('\\s*');
const DAY = `(?:${DAY_NAMES.map(token).join('|')})`;
const DAYS_ITEM = `${DAY}(?:\\s*-\\s*${DAY})?`;
/** A ticked day box of a window row: "<row>:<day>", the row counted from 0. */
export const WINDOW_DAY = `\\d{1,2}:${DAY}`;
/** "daily", or a comma-separated list of days and day ranges ("mon-fri", "sat,sun", "fri-mon" wraps the week). */
export const DAYS = `(?:${token(EVERY_DAY)}|${DAYS_ITEM}(?:\\s*,\\s*${DAYS_ITEM})*)`;

/** "Try up to N times": 1 to MAX_ATTEMPTS (a single digit). */
export const ATTEMPTS = `[1-${MAX_ATTEMPTS}]`;
/** An outcome a retry policy may dial again (never rejected). */
export const RETRY_OUTCOME = `(?:${RETRYABLE_OUTCOMES.join('|')})`;
/** A wait between attempts: a whole number of minutes, 1 to 10080 (RETRY_WAIT_MAX_MINUTES, 7 days), no leading zero. */
export const RETRY_WAIT = '(?:[1-9]\\d{0,3}|100[0-7]\\d|10080)';
/** 1 to RETRY_WAITS_MAX waits, separated by a comma (blanks around it) or by blanks. */
export const RETRY_WAITS = `${RETRY_WAIT}(?:(?:\\s*,\\s*|\\s+)${RETRY_WAIT}){0,${RETRY_WAITS_MAX - 1}}`;
/** A voicemail message's characters: no control character but a line break (CR, LF). */
export const VOICEMAIL_TEXT = '^[^\\u0000-\\u0009\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$';

/** A literal union from a vocabulary tuple, literal member by member (a `.map` would widen it to string). */
function literals<const T extends readonly string[]>(values: T): { -readonly [K in keyof T]: TLiteral<T[K]> } {
  return values.map((value) => Type.Literal(value)) as { -readonly [K in keyof T]: TLiteral<T[K]> };
}

/** A repeated field: one value, or several in the order of the rows on the page; each empty or as `pattern` says. */
const Rows = (description: string, maxLength: number, pattern: string) =>
  Type.Optional(
    Type.Union(
      [
        Type.String({ maxLength, pattern: blankOr(pattern) }),
        Type.Array(Type.String({ maxLength, pattern: blankOr(pattern) }), { maxItems: 50 }),
      ],
      { description },
    ),
  );

export const AgentForm = Form(
  {
    name: Type.String({
      maxLength: 1000,
      description:
        "The agent's name (1 to 200 characters; a visible character, no control or text-direction characters)",
    }),
    phone: Type.String({
      maxLength: 100,
      pattern: `^${TYPED_NUMBER}$`,
      description:
        'Caller ID as people write it: digits with blanks, brackets, dots, dashes or slashes, e.g. +1 415 555 2671, ' +
        "or (415) 555-2671 without a country code for a number of the account's country (the country of its agents' " +
        'numbers, else the US); stored in E.164 (a length possible for its country); empty: none (the agent cannot ' +
        'place calls)',
    }),
    timezone: Type.String({
      maxLength: 100,
      pattern: '\\S',
      description: 'IANA time zone the calling windows are read in (the server checks that the zone exists)',
    }),
    policy: Type.Optional(
      Type.Union([Type.Literal('queue'), Type.Literal('reject')], {
        description:
          'Outside the calling window: queue the call until it opens, or reject the trigger; reject needs a window. ' +
          "Absent (the page's script leaves it out without a window): queue on a new agent; on an edit, unchanged, " +
          'or queue when the edit leaves no window',
      }),
    ),
    account: Type.Optional(
      Type.String({
        maxLength: 64,
        pattern: `^(?:${UUID_PATTERN.slice(1, -1)})?$`,
        description:
          "The account the new agent belongs to (agency users; the agency or one of its clients); empty: the viewer's",
      }),
    ),
    window_timezone: Type.Optional(
      Type.Union(literals(WINDOW_TIMEZONES), {
        description:
          "Whose local time the calling windows are read in: agent (the agent's time zone) or recipient (the callee's: " +
          "the trigger's recipient_timezone, else their number's country when it has one zone, else the agent's); " +
          'recipient needs a window; absent: agent on a new agent; on an edit, unchanged, or agent when the edit ' +
          'leaves no window',
      }),
    ),
    max_attempts: Type.Optional(
      Type.String({
        maxLength: 20,
        pattern: `^\\s*${ATTEMPTS}\\s*$`,
        description: `Try up to this many times in all: a whole number from 1 to ${MAX_ATTEMPTS} (1: no retry); absent: 1 on a new agent, unchanged on an edit`,
      }),
    ),
    retry_on: Type.Optional(
      Type.Union(
        [
          Type.String({ maxLength: 50, pattern: blankOr(RETRY_OUTCOME) }),
          Type.Array(Type.String({ maxLength: 50, pattern: blankOr(RETRY_OUTCOME) }), { maxItems: 10 }),
        ],
        {
          description:
            `The outcomes dialled again, one field per ticked box: ${RETRYABLE_OUTCOMES.join(', ')} (never rejected: ` +
            'the callee declined); absent: none. More than 1 attempt needs at least one, 1 attempt allows none; ' +
            'voicemail needs voicemail detection',
        },
      ),
    ),
    retry_waits_minutes: Type.Optional(
      Type.String({
        maxLength: 100,
        pattern: `^\\s*${RETRY_WAITS}\\s*$`,
        description:
          `Minutes to wait before attempt 2, 3, ...: 1 to ${RETRY_WAITS_MAX} whole numbers, each from 1 to ` +
          `${RETRY_WAIT_MAX_MINUTES} (7 days), separated by commas, e.g. "30, 120, 1440"; the last repeats; absent: ` +
          '30, 120, 1440 on a new agent, unchanged on an edit',
      }),
    ),
    voicemail: Type.Optional(
      Type.Union(literals(VOICEMAIL_POLICIES), {
        description:
          'When a machine answers: off (no answering-machine detection), hang_up, or leave_message (says ' +
          'voicemail_message, then hangs up); absent: off on a new agent, unchanged on an edit',
      }),
    ),
    consent_required: Type.Optional(
      Type.Union([Type.Literal('off'), Type.Literal('on')], {
        description:
          'Whether every trigger for the agent must carry the callee\'s consent (400 "Consent is required for this ' +
          'agent" without it); absent: off on a new agent, unchanged on an edit',
      }),
    ),
    voicemail_message: Type.Optional(
      Type.String({
        maxLength: 2000,
        pattern: VOICEMAIL_TEXT,
        description:
          `The message left on a machine: at most ${VOICEMAIL_MESSAGE_MAX} characters (a line break counts as one), ` +
          `no control character but line breaks; ${VOICEMAIL_NAME_PLACEHOLDER} is replaced by the trigger's name (no ` +
          'other placeholder); needed for leave_message, refused with any other voicemail setting; empty: none; ' +
          'absent: none on a new agent; on an edit, unchanged, or none when voicemail is not leave_message',
      }),
    ),
    window_day: Type.Optional(
      Type.Union(
        [
          Type.String({ maxLength: 20, pattern: blankOr(WINDOW_DAY) }),
          Type.Array(Type.String({ maxLength: 20, pattern: blankOr(WINDOW_DAY) }), { maxItems: 7 * 50 }),
        ],
        {
          description:
            `Each ticked day of a calling window row, one field per box: "<row>:<day>" (row from 0, day one of ` +
            `${DAY_NAMES.join(', ')}), e.g. "0:mon"; a row with times needs at least one`,
        },
      ),
    ),
    window_from: Rows(
      'Each calling window row: opens at HH:MM (00:00 to 23:59) in the time zone window_timezone names',
      20,
      OPEN_TIME,
    ),
    window_to: Rows(
      'Each calling window row: closes at HH:MM (00:00 to 23:59, or 24:00; earlier than "from": the next day); a row ' +
        'with times needs both, and they differ (00:00: until midnight)',
      20,
      CLOSE_TIME,
    ),
    ...handoffFields,
    action: Type.Optional(
      Type.String({
        maxLength: 40,
        pattern: '^(?:save|add-window|remove-window-\\d{1,2})$',
        description:
          'The button pressed: save (also when absent), add-window (show the form again with an empty window row), ' +
          'or remove-window-<row> (show it again without that row); the last two save nothing',
      }),
    ),
  },
  'Create or edit an agent',
);
export type AgentForm = Static<typeof AgentForm>;

/** An edit: the same form; an agent keeps its account, so the field is not read and only its length bounded. */
export const AgentEditForm = Type.Object(
  {
    ...AgentForm.properties,
    account: Type.Optional(Type.String({ maxLength: 64, description: "Not read: an edit keeps the agent's account" })),
  },
  { additionalProperties: false, description: 'Edit an agent' },
);
export type AgentEditForm = Static<typeof AgentEditForm>;

export const AgentParams = Type.Object({
  id: Type.String({ maxLength: 1000, description: 'The agent id (anything else is a 404)' }),
});
export type AgentParams = Static<typeof AgentParams>;
