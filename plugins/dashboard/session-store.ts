// @fastify/session's store on our PostgreSQL (src/storage/sessions.ts): the cookie's id is kept only as a digest;
// a session past its idle timeout or its absolute expiry is not found (the user signs in again). Its callbacks are
// called through a guard: whatever they throw goes back to the request that made the call, never to the process.
import { createHash } from 'node:crypto';
import type { Session } from 'fastify';
import type { SessionStore } from '@fastify/session';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { deleteSession, findLiveSession, insertSession, updateSession } from '../../src/storage/sessions.js';

/** What our routes keep in a session, next to @fastify/session's cookie (the CSRF secret is in a cookie of its own). */
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

const IN_COLUMNS_OR_COOKIE = new Set(['cookie', 'userId', 'createdAt']);

/** Everything but what lives in columns or in the cookie. */
function dataOf(session: Session): Record<string, unknown> {
  const data = Object.fromEntries(Object.entries(session).filter(([key]) => !IN_COLUMNS_OR_COOKIE.has(key)));
  return JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
}

/**
 * @fastify/session's callbacks go on with the request (its `done`, then Fastify's hooks, up to writing the head), and
 * we call them from a database promise: a throw there would be an unhandled rejection, which stops the process. So
 * a throw is handed back to the same callback as the error of the call (@fastify/session then passes it to Fastify
 * as the request's error: a 500 page and a log line); should that throw as well, `lost` logs it.
 */
function guarded<A extends unknown[]>(
  callback: (...args: A) => void,
  lost: (error: unknown) => void,
): (...args: A) => void {
  return (...args: A) => {
    try {
      callback(...args);
    } catch (thrown) {
      try {
        (callback as unknown as (error: unknown) => void)(thrown);
      } catch (again) {
        lost(again);
      }
    }
  };
}

export class PostgresSessionStore implements SessionStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly timeouts: SessionTimeouts,
    private readonly now: () => Date,
    /** Told of a throw that could not be handed back to the request (logged: it is a bug). */
    private readonly lost: (error: unknown) => void,
  ) {}

  get(sessionId: string, callback: (error: unknown, session?: Session | null) => void): void {
    const done = guarded(callback, this.lost);
    const now = this.now();
    findLiveSession(this.prisma, sessionDigest(sessionId), now, new Date(now.getTime() - this.timeouts.idleMs)).then(
      (stored) => {
        if (!stored) return done(null, null);
        const session = {
          ...stored.data,
          createdAt: stored.createdAt.toISOString(),
          ...(stored.userId ? { userId: stored.userId } : {}),
        };
        done(null, session as unknown as Session);
      },
      (error: unknown) => done(error),
    );
  }

  set(sessionId: string, session: Session, callback: (error?: unknown) => void): void {
    const done = guarded(callback, this.lost);
    const now = this.now();
    const digest = sessionDigest(sessionId);
    const userId = session.userId ?? null;
    // A stored session is only ever updated: one ended meanwhile (signed out everywhere) stays ended.
    const saved = session.createdAt
      ? updateSession(this.prisma, digest, { userId, data: dataOf(session), now })
      : insertSession(this.prisma, {
          digest,
          userId,
          data: dataOf(session),
          now,
          expiresAt: new Date(now.getTime() + this.timeouts.maxMs),
        }).then(() => {
          session.createdAt = now.toISOString();
        });
    saved.then(
      () => done(),
      (error: unknown) => done(error),
    );
  }

  destroy(sessionId: string, callback: (error?: unknown) => void): void {
    const done = guarded(callback, this.lost);
    deleteSession(this.prisma, sessionDigest(sessionId)).then(
      () => done(),
      (error: unknown) => done(error),
    );
  }
}
