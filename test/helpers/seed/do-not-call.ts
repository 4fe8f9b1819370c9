// Do-not-call lists written straight to the database: long lists at once, entries and imports in states no form
// leaves (test/helpers/seed.ts says when a test writes directly).
import type { Prisma, PrismaClient } from '../../../src/generated/prisma/client.js';
import { bulk } from './bulk.js';

/**
 * `count` numbers on the do-not-call list of `accountId` (+1202 followed by 0000001, 0000002, ...), set-based as
 * bench/ seeds a large list: importing 100,000 through src/admin would take minutes.
 */
export async function seedDoNotCallNumbers(prisma: PrismaClient, accountId: string, count: number): Promise<void> {
  await bulk(
    prisma,
    `INSERT INTO do_not_call_entries (id, account_id, phone_number, reason, added_by)
     SELECT gen_random_uuid(), $1::uuid, '+1202' || lpad(n::text, 7, '0'), NULL, 'seed'
       FROM generate_series(1, $2::int) AS n`,
    [accountId, count],
  );
}

/** Do-not-call entries as written: many at once, or with an added_by or a date no form writes. */
export function insertDoNotCallEntries(prisma: PrismaClient, args: Prisma.DoNotCallEntryCreateManyArgs) {
  return prisma.doNotCallEntry.createMany(args);
}

/** One do-not-call entry as written (see insertDoNotCallEntries). */
export function insertDoNotCallEntry(prisma: PrismaClient, args: Prisma.DoNotCallEntryCreateArgs) {
  return prisma.doNotCallEntry.create(args);
}

/** Do-not-call entries changed in place (a date moved into the past, a reason an older release wrote). */
export function forceDoNotCallEntries(prisma: PrismaClient, args: Prisma.DoNotCallEntryUpdateManyArgs) {
  return prisma.doNotCallEntry.updateMany(args);
}

/**
 * Empties do-not-call lists between a file's tests: removing each number through src/admin would audit each and
 * end nothing a test needs.
 */
export function clearDoNotCall(prisma: PrismaClient, args: Prisma.DoNotCallEntryDeleteManyArgs) {
  return prisma.doNotCallEntry.deleteMany(args);
}

/** An import of a do-not-call list left as a crash or an older release leaves it (running, stale, half done). */
export function forceDoNotCallImport(prisma: PrismaClient, args: Prisma.DoNotCallImportUpdateArgs) {
  return prisma.doNotCallImport.update(args);
}

/** An import's row written as it was when it started (see forceDoNotCallImport), made when missing. */
export function upsertDoNotCallImport(prisma: PrismaClient, args: Prisma.DoNotCallImportUpsertArgs) {
  return prisma.doNotCallImport.upsert(args);
}
