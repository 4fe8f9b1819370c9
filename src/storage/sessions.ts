// The sessions table: dashboard sessions by the digest of their cookie id, with idle and absolute expiry.
import type { Prisma } from '../generated/prisma/client.js';
import type { Db } from './db-types.js';

export interface StoredSession {
  userId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** The session when it is neither past its absolute expiry nor idle since `idleSince`. */
export async function findLiveSession(
  db: Db,
  digest: Buffer,
  now: Date,
  idleSince: Date,
): Promise<StoredSession | null> {
  const row = await db.session.findFirst({
    where: { digest: new Uint8Array(digest), expiresAt: { gt: now }, lastSeenAt: { gt: idleSince } },
    select: { userId: true, data: true, createdAt: true },
  });
  return row && { userId: row.userId, data: (row.data ?? {}) as Record<string, unknown>, createdAt: row.createdAt };
}

export async function insertSession(
  db: Db,
  input: { digest: Buffer; userId: string | null; data: Record<string, unknown>; now: Date; expiresAt: Date },
): Promise<void> {
  await db.session.create({
    data: {
      digest: new Uint8Array(input.digest),
      userId: input.userId,
      data: input.data as Prisma.InputJsonObject,
      createdAt: input.now,
      lastSeenAt: input.now,
      expiresAt: input.expiresAt,
    },
  });
}

/**
 * Saves a live session's data and moves its last-seen time. Never re-creates a session that was ended meanwhile (a
 * request still in flight when the user signed out everywhere must not bring its session back).
 */
export async function updateSession(
  db: Db,
  digest: Buffer,
  input: { userId: string | null; data: Record<string, unknown>; now: Date },
): Promise<boolean> {
  const { count } = await db.session.updateMany({
    where: { digest: new Uint8Array(digest), expiresAt: { gt: input.now } },
    data: { userId: input.userId, data: input.data as Prisma.InputJsonObject, lastSeenAt: input.now },
  });
  return count === 1;
}

export async function deleteSession(db: Db, digest: Buffer): Promise<void> {
  await db.session.deleteMany({ where: { digest: new Uint8Array(digest) } });
}

/** Ends every session of the user (but the one with digest `keep`, when given); returns how many ended. */
export async function deleteUserSessions(db: Db, userId: string, keep?: Buffer): Promise<number> {
  const { count } = await db.session.deleteMany({
    where: { userId, ...(keep ? { NOT: { digest: new Uint8Array(keep) } } : {}) },
  });
  return count;
}
