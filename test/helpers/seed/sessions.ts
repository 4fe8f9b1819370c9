// Dashboard sessions changed straight in the database: a state only time reaches (a sign-in long ago), without
// waiting for it (test/helpers/seed.ts says when a test writes directly).
import type { PrismaClient } from '../../../src/generated/prisma/client.js';
import { bulk } from './bulk.js';

/**
 * Every session of `userId` says its password was last entered at `at` (ms since the epoch): a sign-in as old as the
 * test needs, for what asks for a recent one. The rest of each session's data is kept.
 */
export async function ageSignIn(prisma: PrismaClient, userId: string, at: number): Promise<void> {
  await bulk(
    prisma,
    `UPDATE sessions SET data = jsonb_set(data, '{authenticatedAt}', to_jsonb($1::bigint)) WHERE user_id = $2::uuid`,
    [at, userId],
  );
}
