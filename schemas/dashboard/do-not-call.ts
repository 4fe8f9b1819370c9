// The Do-not-call list page's forms and query string: add a number (from the page, or from a call's detail view),
// remove one, import a CSV file (a multipart form), and a page of the list (search, keyset cursor). Lengths bound the
// input; what a number and a reason must be (a number the trigger would take, once read into E.164; one readable line
// of at most 500 characters) src/admin checks, in the words callctl gives too.
import { Type, type Static } from '@sinclair/typebox';
import { UUID_PATTERN } from '../uuid.js';
import { Form } from './forms.js';

const PhoneNumber = Type.String({
  maxLength: 64,
  description: 'The number, E.164 exactly as stored (like +14155552671)',
});
const WrittenNumber = Type.String({
  maxLength: 64,
  description:
    "The number as people write it: E.164 (+1 415 555 2671 with spaces too), or without a plus as dialled in the account's country ((415) 555-2671); stored in E.164",
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
    phone_number: WrittenNumber,
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

export const ImportMode = Type.Union([Type.Literal('all'), Type.Literal('good_rows')], {
  description:
    'all: a file with a bad row imports nothing (the default); good_rows: the good rows, the bad ones listed',
});
export type ImportMode = Static<typeof ImportMode>;

/**
 * The import's multipart form, read part by part in this order (the handler streams the file to the parser once the
 * token is checked): _csrf, mode, file. Not a route body schema: the route reads the parts itself.
 */
export const ImportDoNotCallForm = Form(
  {
    mode: Type.Optional(ImportMode),
    file: Type.Unknown({
      description:
        'The CSV file (multipart/form-data): UTF-8, a first line naming the columns (phone_number,reason; "Phone Number,Reason" too) or a plain list of numbers, at most 2 MiB',
    }),
  },
  'Import numbers from a CSV file',
);
export type ImportDoNotCallForm = Static<typeof ImportDoNotCallForm>;
