// One page of a list the dashboard shows by page number (the Agents and Clients pages): how many rows there are, then
// the page's rows alone. Never every row.
//
// LIMIT/OFFSET by page number rather than a keyset: these lists are one agency's accounts or agents, a set bounded by
// the agency's size (thousands at most, not the millions of calls, which use keysets), read through the agency's
// index and sorted in memory; skipping rows of it costs no more than sorting them. A page number lets the page say
// which rows it shows out of how many and link back as simply as forward.

/** The page asked for (from 1) and how many rows a page holds. */
export interface PageWanted {
  page: number;
  size: number;
}

/** A page of a list: its rows, how many rows the list has in all, and the page shown (from 1). */
export interface ListPage<T> {
  rows: T[];
  total: number;
  /** The page asked for, or the last one when that was beyond the end (1 for an empty list). */
  page: number;
  size: number;
}

/**
 * Counts the list, then reads the page asked for (the last page when it is beyond the end): `count` and `read` take
 * the same conditions, `read` in the list's order.
 */
export async function readPage<T>(
  wanted: PageWanted,
  count: () => Promise<number>,
  read: (range: { skip: number; take: number }) => Promise<T[]>,
): Promise<ListPage<T>> {
  const size = Math.max(1, Math.floor(wanted.size));
  const total = await count();
  const last = Math.max(1, Math.ceil(total / size));
  const page = Math.min(Math.max(1, Math.floor(wanted.page)), last);
  const rows = total === 0 ? [] : await read({ skip: (page - 1) * size, take: size });
  return { rows, total, page, size };
}
