// @fastify/session's store on our PostgreSQL (src/storage/sessions.ts): the cookie's id is kept only as a digest;
// a session past its idle timeout or its absolute expiry is not found (the user signs in again).
import { createHash } from 'node:crypto';
import type { Session } from 'fastify';
import type { SessionStore } from '@fastify/session';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { deleteSession, findLiveSession, insertSession, updateSession } from '../../src/storage/sessions.js';

/** What our routes keep in a session, next to @fastify/session's cookie and @fastify/csrf-protection's `_csrf`. */
declare module 'fastify' {
  interface Session {
    /** The signed-in user; absent before sign-in. */
    userId?: string;
    /** When the user last typed their password (sign-in or re-entry), epoch ms: "recent sign-in". */
    authenticatedAt?: number;
    /** One notice for the next page shown (after POST -> redirect -> GET). */
    flash?: { kind: 'ok' | 'error'; text: string };
    /** Set by the store: when the session began (ISO). A session without it has never been stored. */
    createdAt?: string;
    _csrf?: string;
  }
}

export interface SessionTimeouts {
  idleMs: number;
  maxMs: number;
}

/** The id as stored: a SHA-256 digest, so a reader of the table cannot take over a session. */
export function sessionDigest(sessionId: string): Buffer {
  return createHash('sha256').update(sessionId, 'utf8').digest();
}

/** Everything but what lives in columns or in the cookie. */
function dataOf(session: Session): Record<string, unknown> {
  const { cookie: _cookie, userId: _userId, createdAt: _createdAt, ...data } = session as unknown as Record<string, unknown>;
  return JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
}

export class PostgresSessionStore implements SessionStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly timeouts: SessionTimeouts,
    private readonly now: () => Date,
  ) {}

  get(sessionId: string, callback: (error: unknown, session?: Session | null) => void): void {
    const now = this.now();
    findLiveSession(this.prisma, sessionDigest(sessionId), now, new Date(now.getTime() - this.timeouts.idleMs)).then(
      (stored) => {
        if (!stored) return callback(null, null);
        const session = { ...stored.data, createdAt: stored.createdAt.toISOString(), ...(stored.userId ? { userId: stored.userId } : {}) };
        callback(null, session as unknown as Session);
      },
      (error: unknown) => callback(error),
    );
  }

  set(sessionId: string, session: Session, callback: (error?: unknown) => void): void {
    const now = this.now();
    const digest = sessionDigest(sessionId);
    const userId = session.userId ?? null;
    // A stored session is only ever updated: one ended meanwhile (signed out everywhere) stays ended.
    const saved = session.createdAt
      ? updateSession(this.prisma, digest, { userId, data: dataOf(session), now })
      : insertSession(this.prisma, { digest, userId, data: dataOf(session), now, expiresAt: new Date(now.getTime() + this.timeouts.maxMs) })
          .then(() => { session.createdAt = now.toISOString(); });
    saved.then(() => callback(), (error: unknown) => callback(error));
  }

  destroy(sessionId: string, callback: (error?: unknown) => void): void {
    deleteSession(this.prisma, sessionDigest(sessionId)).then(() => callback(), (error: unknown) => callback(error));
  }
}
