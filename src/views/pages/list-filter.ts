// The Agents and Clients lists' name filter, count and pager (list-filter.eta and list-pager.eta).
// The Agents and Clients lists' pages and name filter: the query string as the page reads it (a part the schema
// refuses is left out and said, and the first page shown: never an error page), the line saying which rows are shown
// out of how many, and Previous/Next links that keep the filter. An agency of a thousand clients gets a page at a time.
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FastifyRequest } from 'fastify';
import { NAME_FILTER_MAX_LENGTH, PAGE_DIGITS_MAX } from '../../../schemas/dashboard/lists.js';
import type { ListPage } from '../../storage/index.js';

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

/** The rows a page of the Agents or Clients list shows (and the most archived agents the Agents page shows). */
export const LIST_PAGE_SIZE = 50;

/** What the query string asks for: the name filter (null: none) and the page, and what was wrong with it. */
export interface ListAsked {
  name: string | null;
  page: number;
  problems: string[];
}

/** The first page of the whole list (a form's answer shows it). */
export const FIRST_PAGE: ListAsked = { name: null, page: 1, problems: [] };

/** The name filter and page `request` asks for, as `schema` (the route's querystring schema) takes them. */
export function listAsked(request: FastifyRequest, schema: TSchema): ListAsked {
  const query = (request.query ?? {}) as Record<string, unknown>;
  if (!request.validationError) {
    const name = typeof query.name === 'string' ? query.name.trim() : '';
    const page = typeof query.page === 'string' ? Number(query.page.trim()) : 1;
    return { name: name || null, page, problems: [] };
  }
  // The route's validation stops at the first part it refuses; the schema's own errors name every one.
  const refused = new Set([...Value.Errors(schema, query)].map((error) => error.path.split('/')[1]));
  const asked: ListAsked = { name: null, page: 1, problems: [] };
  if (refused.has('name'))
    asked.problems.push(
      `"Name starts with" takes one text of at most ${NAME_FILTER_MAX_LENGTH} characters: the list is not filtered.`,
    );
  else if (typeof query.name === 'string') asked.name = query.name.trim() || null;
  if (refused.has('page'))
    asked.problems.push(
      `The page must be a whole number from 1, of at most ${PAGE_DIGITS_MAX} digits: the first page is shown.`,
    );
  else if (typeof query.page === 'string') asked.page = Number(query.page.trim());
  if (asked.problems.length === 0)
    asked.problems.push('This address asks for a page in a way the page does not know: the first page is shown.');
  return asked;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * The filter form, count line and links of a page of the list at `path` of `words.many` ("agents"). `more`: a
 * section of the page beside this list has more rows than it shows (the name filter then shows too).
 */
export function namedList(
  path: string,
  words: { one: string; many: string },
  asked: ListAsked,
  page: ListPage<unknown>,
  more = false,
): NamedList {
  const name = asked.name ?? '';
  const link = (to: number) => {
    const params = new URLSearchParams({ ...(name ? { name } : {}), ...(to > 1 ? { page: String(to) } : {}) });
    return params.size ? `${path}?${params.toString()}` : path;
  };
  const paged = page.total > page.size;
  const filter = name ? ` whose name starts with "${name}"` : '';
  const first = (page.page - 1) * page.size + 1;
  const last = first + page.rows.length - 1;
  const shown = first === last ? count(first) : `${count(first)}–${count(last)}`;
  let line: string | null = null;
  if (page.rows.length > 0 && paged) line = `${capitalized(words.many)} ${shown} of ${count(page.total)}${filter}`;
  else if (page.rows.length > 0 && name)
    line = `${count(page.total)} ${page.total === 1 ? words.one : words.many}${filter}`;
  return {
    path,
    many: words.many,
    name,
    maxLength: NAME_FILTER_MAX_LENGTH,
    filterShown: Boolean(name) || paged || more,
    problems: asked.problems,
    count: line,
    previousHref: page.page > 1 ? link(page.page - 1) : null,
    nextHref: page.page * page.size < page.total ? link(page.page + 1) : null,
  };
}

function capitalized(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
