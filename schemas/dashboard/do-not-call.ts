// The Do-not-call list page's forms and query string: add a number (from the page, or from a call's detail view),
// remove one, import a CSV file (a multipart form), and a page of the list (search, keyset cursor). Lengths bound the
// input; what a number and a reason must be (E.164 exactly as the trigger takes it; one readable line of at most 500
// characters) src/admin checks, in the words callctl gives too.
import { Type, type Static } from '@sinclair/typebox';
import { UUID_PATTERN } from '../uuid.js';
import { Form } from './forms.js';

const PhoneNumber = Type.String({
  maxLength: 64,
  description: 'The number, E.164 exactly as triggers send it (like +14155552671); never normalised',
});
const Search = Type.String({
  maxLength: 200,
  description:
    'Digits (with or without the +): numbers beginning with them; anything else: reasons containing it (any case)',
});

export const DoNotCallQuery = Type.Object(
  {
    q: Type.Optional(Search),
    after: Type.Optional(
      Type.String({ maxLength: 64, description: 'Cursor: the page starts after this number (from "Next")' }),
    ),
  },
  { description: 'One page of a do-not-call list, in number order, optionally searched' },
);
export type DoNotCallQuery = Static<typeof DoNotCallQuery>;

export const AddDoNotCallForm = Form(
  {
    phone_number: PhoneNumber,
    reason: Type.Optional(
      Type.String({
        maxLength: 4000,
        description: 'Why it must not be called (optional; at most 500 characters, one line)',
      }),
    ),
    call: Type.Optional(
      Type.String({
        maxLength: 64,
        pattern: UUID_PATTERN,
        description: "Sent from this call's detail view: go back there afterwards",
      }),
    ),
  },
  "Add a number to the list: triggers to it are refused, and the list's waiting calls to it fail before they are dialled",
);
export type AddDoNotCallForm = Static<typeof AddDoNotCallForm>;

export const RemoveDoNotCallForm = Form(
  {
    phone_number: PhoneNumber,
    q: Type.Optional(Search),
  },
  'Remove a number from the list (q: the search to go back to)',
);
export type RemoveDoNotCallForm = Static<typeof RemoveDoNotCallForm>;

export const ImportDoNotCallForm = Form(
  {
    // Any value: the handler takes a file (a Buffer) and words every other case itself.
    file: Type.Unknown({
      description:
        'The CSV file (multipart/form-data): UTF-8, first line phone_number,reason, at most 2 MiB; every row is imported or, when any row is bad, none',
    }),
  },
  'Import numbers from a CSV file',
);
export type ImportDoNotCallForm = Static<typeof ImportDoNotCallForm>;
