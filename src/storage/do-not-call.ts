// The do_not_call_entries table: an account's list of numbers never to call, in number order (keyset pages on the
// unique (account_id, phone_number) index), searched by a number's beginning or a reason's words; entries added one
// at a time or by an import (do-not-call-import.ts), removed one at a time. The trigger's check is in the acceptance
// function (oct_accept_call_v3: the key's account's list, its agency's and the client a call is listed for) and the
// dispatcher's in its claim (call-claims.ts). Prisma Client; an import's writes, hand-written, on the pool.
export type { ImportSlot } from './do-not-call-import.js';
import { PrismaRepository } from './driver.js';
import { likeLiteral } from './like.js';

export interface DoNotCallEntry {
  id: string;
  accountId: string;
  phoneNumber: string;
  reason: string | null;
  addedBy: string;
  addedAt: Date;
}

/** What a page of a list shows: numbers beginning with `prefix`, or reasons containing `text` (any case). */
export type EntrySearch = { kind: 'prefix'; prefix: string } | { kind: 'reason'; text: string } | null;

const SELECT = { id: true, accountId: true, phoneNumber: true, reason: true, addedBy: true, addedAt: true } as const;

/**
 * The first string after every "+digits" string that begins with `prefix` ("+1419" -> "+142"), or null when there is
 * none ("+99"). Numbers are a plus and digits, which every collation orders digit by digit as "C" does, so the range
 * [prefix, next) is exactly the numbers beginning with it and reads the unique index whatever the database's
 * collation (a LIKE 'prefix%' would need "C" or text_pattern_ops to use it).
 */
export function afterPrefix(prefix: string): string | null {
  const digits = prefix.slice(1).replace(/9+$/, '');
  if (digits === '') return null;
  return `+${digits.slice(0, -1)}${String(Number(digits.at(-1)) + 1)}`;
}

function searchWhere(search: EntrySearch) {
  if (search === null) return {};
  if (search.kind === 'reason') return { reason: { contains: likeLiteral(search.text), mode: 'insensitive' as const } };
  const next = afterPrefix(search.prefix);
  return { phoneNumber: next === null ? { gte: search.prefix } : { gte: search.prefix, lt: next } };
}

export class DoNotCallRepository extends PrismaRepository {
  /** Adds the number to the account's list; `added` false (and the entry as it was) when it already was on it. */
  async addEntry(input: Omit<DoNotCallEntry, 'id'>): Promise<{ added: boolean; entry: DoNotCallEntry }> {
    const [created] = await this.prisma.doNotCallEntry.createManyAndReturn({
      data: [input],
      skipDuplicates: true,
      select: SELECT,
    });
    if (created) return { added: true, entry: created };
    const existing = await this.findEntry(input.accountId, input.phoneNumber);
    // Removed again between the two statements: the caller's transaction is rolled back and may be tried again.
    if (!existing) throw new Error('do-not-call entry vanished while it was being added');
    return { added: false, entry: existing };
  }

  async findEntry(accountId: string, phoneNumber: string): Promise<DoNotCallEntry | null> {
    return this.prisma.doNotCallEntry.findUnique({
      where: { accountId_phoneNumber: { accountId, phoneNumber } },
      select: SELECT,
    });
  }

  /** The entries for `phoneNumber` on the lists of `accountIds` (a call's account and its agency). */
  async findEntries(accountIds: string[], phoneNumber: string): Promise<DoNotCallEntry[]> {
    return this.prisma.doNotCallEntry.findMany({
      where: { accountId: { in: accountIds }, phoneNumber },
      orderBy: { addedAt: 'asc' },
      select: SELECT,
    });
  }

  /** Removes the number from the account's list: the entry it was, or null when it was not on it. */
  async removeEntry(accountId: string, phoneNumber: string): Promise<DoNotCallEntry | null> {
    const entry = await this.findEntry(accountId, phoneNumber);
    if (!entry) return null;
    const { count } = await this.prisma.doNotCallEntry.deleteMany({ where: { id: entry.id } });
    return count === 1 ? entry : null;
  }

  /**
   * One page of the account's list in number order, after the number `after` (keyset on the unique index: the cost
   * does not grow with the page), and the cursor of the next page (null at the end). A reason search filters the
   * account's entries as it walks them in that order.
   */
  async listEntries(
    accountId: string,
    page: { search: EntrySearch; after?: string | undefined; limit: number },
  ): Promise<{ entries: DoNotCallEntry[]; next: string | null }> {
    const where = { accountId, ...searchWhere(page.search) };
    const after = page.after === undefined ? {} : { gt: page.after };
    const phoneNumber = { ...('phoneNumber' in where ? where.phoneNumber : {}), ...after };
    const rows = await this.prisma.doNotCallEntry.findMany({
      where: { ...where, ...(Object.keys(phoneNumber).length > 0 ? { phoneNumber } : {}) },
      orderBy: { phoneNumber: 'asc' },
      take: page.limit + 1,
      select: SELECT,
    });
    const entries = rows.slice(0, page.limit);
    return { entries, next: rows.length > page.limit ? (entries.at(-1)?.phoneNumber ?? null) : null };
  }

  /** How many entries of the account's list match, counting no further than `cap` (a list may hold millions). */
  async countEntries(accountId: string, search: EntrySearch, cap: number): Promise<number> {
    return this.prisma.doNotCallEntry.count({ where: { accountId, ...searchWhere(search) }, take: cap });
  }

  /** The account's whole list in number order, a batch at a time (the export, callctl's list). */
  async *eachEntry(accountId: string, batch = EXPORT_BATCH): AsyncGenerator<DoNotCallEntry[]> {
    let after: string | undefined;
    for (;;) {
      const { entries, next } = await this.listEntries(accountId, { search: null, after, limit: batch });
      if (entries.length > 0) yield entries;
      if (next === null) return;
      after = next;
    }
  }
}

const EXPORT_BATCH = 1_000;
