// The one_time_tokens table: set-password, invitation and password-reset links, by digest; single use, until they expire.
import type { TokenPurpose } from '../generated/prisma/enums.js';
import type { Db } from './db-types.js';

export async function insertToken(
  db: Db,
  input: {
    userId: string;
    digest: Buffer;
    purpose: TokenPurpose;
    createdById: string | null;
    createdAt: Date;
    expiresAt: Date;
  },
): Promise<void> {
  await db.oneTimeToken.create({ data: { ...input, digest: new Uint8Array(input.digest) } });
}

/** The link's user when the token is unused and unexpired (the set-password page, before the form is sent). */
export async function findUsableToken(db: Db, digest: Buffer, now: Date) {
  return db.oneTimeToken.findFirst({
    where: { digest: new Uint8Array(digest), usedAt: null, expiresAt: { gt: now } },
    select: { userId: true, purpose: true, user: { select: { email: true, disabledAt: true } } },
  });
}

/**
 * Uses the token: one statement marks it used only if it still is usable, so two requests racing with the same link
 * cannot both succeed. Returns its user, or null (unknown, used or expired).
 */
export async function consumeToken(
  db: Db,
  digest: Buffer,
  now: Date,
): Promise<{ userId: string; purpose: TokenPurpose } | null> {
  const [used] = await db.oneTimeToken.updateManyAndReturn({
    where: { digest: new Uint8Array(digest), usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
    select: { userId: true, purpose: true },
  });
  return used ?? null;
}

/** Ends the user's links that were not used yet (a new link replaces them; a disabled user's stop working); how many. */
export async function expireUserTokens(db: Db, userId: string, now: Date): Promise<number> {
  const { count } = await db.oneTimeToken.updateMany({
    where: { userId, usedAt: null, expiresAt: { gt: now } },
    data: { expiresAt: now },
  });
  return count;
}
