// The Calls pages' query string and parameters. The schema only bounds the input: what a value
// must be (a status, a date, a number, an id) is checked by the handler, which says what is wrong on the page.
import { Type, type Static } from '@sinclair/typebox';

const Filter = (description: string, maxLength = 100) => Type.Optional(Type.String({ maxLength, description }));

export const CallsQuery = Type.Object(
  {
    status: Filter('A call status (initiated, dialing, in_progress, completed, failed); empty: any'),
    agent: Filter("An agent's id; empty: any"),
    client: Filter("An account's id, the agency's own or one of its clients' (agency users); empty: all of them"),
    from: Filter('Created on or after: YYYY-MM-DD (the whole day) or YYYY-MM-DDTHH:MM, in UTC; empty: no bound'),
    to: Filter(
      'Created on or before: YYYY-MM-DD (the whole day) or YYYY-MM-DDTHH:MM (before that minute), in UTC; empty: no bound',
    ),
    number: Filter('The destination number, E.164 (spaces, dashes and parentheses are ignored); empty: any'),
    call: Filter("A call's id: that call alone, if the viewer may see it"),
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
