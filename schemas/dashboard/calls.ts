// The Calls pages' query string and parameters. Each filter states what it must be (a status, a UTC date, an id);
// empty or blank means "any". The page says, filter by filter, what is wrong with those the schema refuses; the
// phone number is checked by the handler once separators are dropped, and an agent or client id against the viewer's.
import { Type, type Static } from '@sinclair/typebox';
import { UUID_PATTERN } from '../uuid.js';
import { CALL_STATUSES } from '../vocabulary.js';
import { blankOr, Form } from './forms.js';

export const FILTER_MAX_LENGTH = 100;

/** A filter's value: blank (any), or what `pattern` (unanchored) says, with blanks around it ignored. */
const Filter = (description: string, pattern?: string) =>
  Type.Optional(
    Type.String({
      maxLength: FILTER_MAX_LENGTH,
      ...(pattern ? { pattern: blankOr(pattern) } : {}),
      description,
    }),
  );
const ID = UUID_PATTERN.slice(1, -1);
/** A day, or a minute (seconds optional), in UTC. */
const DATE = '\\d{4}-\\d{2}-\\d{2}(?:[T ]\\d{2}:\\d{2}(?::\\d{2})?)?';

export const CallsQuery = Type.Object(
  {
    status: Filter(
      'A call status (initiated, dialing, in_progress, completed, failed); empty: any',
      CALL_STATUSES.join('|'),
    ),
    agent: Filter("An agent's id; empty: any", ID),
    agent_name: Filter(
      "The start of an agent's name, in any case (the filter of a scope with more agents than its menu lists); " +
        'an agent whose whole name it is, or the only one whose name starts with it; beside `agent`, that agent ' +
        'while its name still fits; empty: any',
    ),
    client: Filter("An account's id, the agency's own or one of its clients' (agency users); empty: all of them", ID),
    client_name: Filter(
      "The start of an account's name, in any case (the filter of an agency with more accounts than its menu " +
        'lists), chosen as `agent_name` chooses an agent; empty: all of them',
    ),
    from: Filter('Created on or after: YYYY-MM-DD (the whole day) or YYYY-MM-DDTHH:MM, in UTC; empty: no bound', DATE),
    to: Filter(
      'Created on or before: YYYY-MM-DD (the whole day) or YYYY-MM-DDTHH:MM (before that minute), in UTC; empty: no bound',
      DATE,
    ),
    number: Filter(
      'The start of the destination number: "+1415" matches every number that starts so, a whole E.164 number that ' +
        'number (spaces, dashes and parentheses are ignored); empty: any',
    ),
    name: Filter("The start of the call's name (the trigger's `name`), in any case; empty: any"),
    meta_key: Filter(
      'A metadata key (1 to 40 characters), searched together with meta_value; empty: no metadata search',
    ),
    meta_value: Filter(
      "The metadata key's value: a number-looking value (123) matches the JSON number and the string, true/false/null " +
        'the JSON literal and the string, anything else the string exactly',
    ),
    outcome: Filter(
      "The voice-agent runtime's outcome label, exactly but in any case (appointment_booked): the calls whose result " +
        'has it; empty: any',
      '[A-Za-z0-9_.-]{1,64}',
    ),
    call: Filter("A call's id: that call alone, if the viewer may see it", ID),
    held: Filter('yes: only the waiting calls the calling rules hold (hours or a cap per number); empty: any', 'yes'),
    before: Filter('Cursor: the page starts after this call (from "Older")'),
  },
  { description: 'One page of calls, newest first, filtered' },
);
export type CallsQuery = Static<typeof CallsQuery>;

export const CallParams = Type.Object(
  { id: Type.String({ maxLength: 100, description: "The call's id" }) },
  { description: 'A call' },
);
export type CallParams = Static<typeof CallParams>;

/** The metadata key shown as a column of the Calls list (remembered per user); blank: none. */
export const CallsColumnForm = Form(
  {
    column: Type.String({
      maxLength: FILTER_MAX_LENGTH,
      description: 'A metadata key (1 to 40 characters, blanks around it ignored); empty: no metadata column',
    }),
    back: Type.Optional(
      Type.String({
        maxLength: 2048,
        description: 'The Calls list query string to go back to (filters kept), without the "?"',
      }),
    ),
  },
  'Show one metadata key as a column of the Calls list',
);
export type CallsColumnForm = Static<typeof CallsColumnForm>;

/** The most calls one "Cancel selected calls" form names: a page of the Calls list. */
export const CANCEL_MAX_CALLS = 50;
const CallId = Type.String({ maxLength: 64, pattern: UUID_PATTERN, description: "A call's id" });

/** The second step of a cancel: the confirmation page's button (without it, the first POST shows that page). */
const Confirm = Type.Optional(
  Type.Literal('yes', {
    description:
      "Sent by the confirmation page's button: cancel now. Without it the POST cancels nothing and answers the " +
      'confirmation page, which says how many calls and that it cannot be undone',
  }),
);

export const CancelCallForm = Form({ confirm: Confirm }, 'Cancel this call (it must still be waiting)');
export type CancelCallForm = Static<typeof CancelCallForm>;

export const CancelCallsForm = Form(
  {
    call: Type.Optional(
      Type.Union([CallId, Type.Array(CallId, { maxItems: CANCEL_MAX_CALLS })], {
        description:
          'The calls ticked on the Calls list: one id, or several; each must be a call of an account the viewer ' +
          'manages (else the whole form is refused with 404); none ticked: nothing is canceled',
      }),
    ),
    back: Type.Optional(
      Type.String({
        maxLength: 2048,
        description:
          'The Calls list query string to go back to afterwards (its filters and page), without the "?": only the ' +
          "list's own parameters are kept, and the way back is always the Calls list",
      }),
    ),
    confirm: Confirm,
  },
  'Cancel the selected calls of the Calls list (those still waiting; the others are named as not canceled)',
);
export type CancelCallsForm = Static<typeof CancelCallsForm>;
