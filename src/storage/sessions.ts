// The sessions table: dashboard sessions by the digest of their cookie id, with idle and absolute expiry.
// Prisma Client.
import type { Prisma } from '../generated/prisma/client.js';
import { PrismaRepository } from './driver.js';

export interface StoredSession {
  userId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

export class SessionRepository extends PrismaRepository {
  /** The session when it is neither past its absolute expiry nor idle since `idleSince`. */
  async findLiveSession(digest: Buffer, now: Date, idleSince: Date): Promise<StoredSession | null> {
    const row = await this.prisma.session.findFirst({
      where: { digest: new Uint8Array(digest), expiresAt: { gt: now }, lastSeenAt: { gt: idleSince } },
      select: { userId: true, data: true, createdAt: true },
    });
    return row && { userId: row.userId, data: (row.data ?? {}) as Record<string, unknown>, createdAt: row.createdAt };
  }

  async insertSession(input: {
    digest: Buffer;
    userId: string | null;
    data: Record<string, unknown>;
    now: Date;
    expiresAt: Date;
  }): Promise<void> {
    await this.prisma.session.create({
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
  async updateSession(
    digest: Buffer,
    input: { userId: string | null; data: Record<string, unknown>; now: Date },
  ): Promise<boolean> {
    const { count } = await this.prisma.session.updateMany({
      where: { digest: new Uint8Array(digest), expiresAt: { gt: input.now } },
      data: { userId: input.userId, data: input.data as Prisma.InputJsonObject, lastSeenAt: input.now },
    });
    return count === 1;
  }

  /**
   * Moves a live session's last-seen time and nothing else: a request that changed nothing in the session must not
   * write back the data it read, or it would undo what a request that overlapped it stored (a password just re-checked).
   */
  async touchSession(digest: Buffer, now: Date): Promise<boolean> {
    const { count } = await this.prisma.session.updateMany({
      where: { digest: new Uint8Array(digest), expiresAt: { gt: now } },
      data: { lastSeenAt: now },
    });
    return count === 1;
  }

  async deleteSession(digest: Buffer): Promise<void> {
    await this.prisma.session.deleteMany({ where: { digest: new Uint8Array(digest) } });
  }

  /** Ends every session of the user (but the one with digest `keep`, when given); returns how many ended. */
  async deleteUserSessions(userId: string, keep?: Buffer): Promise<number> {
    const { count } = await this.prisma.session.deleteMany({
      where: { userId, ...(keep ? { NOT: { digest: new Uint8Array(keep) } } : {}) },
    });
    return count;
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
