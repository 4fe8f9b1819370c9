// The Agents and Clients lists' query string: the start of a name to filter by and the page to show. A part the schema
// refuses is left out and said on the page (src/routes/dashboard/list-page.ts), which then shows the first page.
import { Type, type Static } from '@sinclair/typebox';
import { FreeText } from '../text.js';

/** The longest name filter: a name is at most 200 characters (src/admin refuses longer ones). */
export const NAME_FILTER_MAX_LENGTH = 200;
/** The most digits a page number has: 999,999 pages (one beyond the list's end shows its last page). */
export const PAGE_DIGITS_MAX = 6;

const ListQuery = (what: string) =>
  Type.Object(
    {
      name: Type.Optional(
        FreeText({
          maxLength: NAME_FILTER_MAX_LENGTH,
          description:
            `The start of the ${what}'s name, in any case, every character as itself (% and _ too); blanks around ` +
            'it ignored; empty: every one',
        }),
      ),
      page: Type.Optional(
        Type.String({
          maxLength: 20,
          pattern: `^\\s*[1-9]\\d{0,${PAGE_DIGITS_MAX - 1}}\\s*$`,
          description:
            'The page to show, a whole number from 1 (Previous and Next carry it); beyond the last page: the last ' +
            'page; absent: the first',
        }),
      ),
    },
    { description: `One page of the ${what}s, by name, optionally only those whose name starts with some text` },
  );

export const AgentsQuery = ListQuery('agent');
export type AgentsQuery = Static<typeof AgentsQuery>;

export const ClientsQuery = ListQuery('client');
export type ClientsQuery = Static<typeof ClientsQuery>;
