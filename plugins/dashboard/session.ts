// The dashboard's sessions: @fastify/cookie and @fastify/session with its store on our PostgreSQL (src/storage/sessions.ts): the cookie's id is kept only as a digest;
// a session past its idle timeout or its absolute expiry is not found (the user signs in again). Its callbacks are
// called through a guard: whatever they throw goes back to the request that made the call, never to the process.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest, Session } from 'fastify';
import fp from 'fastify-plugin';
import cookie from '@fastify/cookie';
import session, { type FastifySessionOptions, type SessionStore } from '@fastify/session';
import type { SessionRepository } from '../../src/storage/index.js';

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

/** Whether the request left the session as it was read (@fastify/session's Session compares digests of its data). */
function isUnchanged(session: Session): boolean {
  const isModified = (session as { isModified?: () => boolean }).isModified;
  return typeof isModified === 'function' && !isModified.call(session);
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
    private readonly sessions: SessionRepository,
    private readonly timeouts: SessionTimeouts,
    private readonly now: () => Date,
    /** Told of a throw that could not be handed back to the request (logged: it is a bug). */
    private readonly lost: (error: unknown) => void,
    /** Whether the session's request is a page refreshing itself (not the user's doing) that changed nothing. */
    private readonly idleRefresh: (session: Session) => boolean = () => false,
  ) {}

  get(sessionId: string, callback: (error: unknown, session?: Session | null) => void): void {
    const done = guarded(callback, this.lost);
    const now = this.now();
    this.sessions.findLiveSession(sessionDigest(sessionId), now, new Date(now.getTime() - this.timeouts.idleMs)).then(
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
    // A live refresh (src/views/assets/live.js) is no sign of the user: it must not move the idle timeout, or a page
    // left open on a waiting call would keep its session alive. Unless it changed the session (a notice shown).
    if (session.createdAt && this.idleRefresh(session)) return done();
    const digest = sessionDigest(sessionId);
    const userId = session.userId ?? null;
    // A stored session is only ever updated: one ended meanwhile (signed out everywhere) stays ended. A request that
    // changed nothing only moves the last-seen time: writing back what it read would undo a change that another
    // request of the same session (a stylesheet fetched while the password was re-checked) stored meanwhile.
    const saved = session.createdAt
      ? isUnchanged(session)
        ? this.sessions.touchSession(digest, now)
        : this.sessions.updateSession(digest, { userId, data: dataOf(session), now })
      : this.sessions
          .insertSession({
            digest,
            userId,
            data: dataOf(session),
            now,
            expiresAt: new Date(now.getTime() + this.timeouts.maxMs),
          })
          .then(() => {
            session.createdAt = now.toISOString();
          });
    saved.then(
      () => done(),
      (error: unknown) => done(error),
    );
  }

  destroy(sessionId: string, callback: (error?: unknown) => void): void {
    const done = guarded(callback, this.lost);
    this.sessions.deleteSession(sessionDigest(sessionId)).then(
      () => done(),
      (error: unknown) => done(error),
    );
  }
}

/**
 * `__Host-`: the browser keeps it only when Secure, Path=/ and without Domain, so no sibling subdomain can set or
 * shadow it. HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site POSTs). A browser-session cookie
 * (no Max-Age): the server enforces the idle and absolute timeouts.
 */
export const SESSION_COOKIE = '__Host-oct_session';
const SESSION_COOKIE_OPTIONS = { path: '/', secure: true, httpOnly: true, sameSite: 'lax' } as const;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * The cookie carries a 256-bit random id and the server keeps only its digest, so signing the cookie would add no
 * protection (a forged id finds no session) but would need a secret shared by every replica. The signer only sorts
 * out values that cannot be one of our ids, before any lookup.
 */
const unsignedIds = {
  sign: (value: string) => value,
  unsign: (value: string) =>
    SESSION_ID.test(value) ? { valid: true, renew: false, value } : { valid: false, renew: false, value: null },
};

function sessionOptions(store: SessionStore): FastifySessionOptions {
  return {
    secret: unsignedIds,
    cookieName: SESSION_COOKIE,
    cookie: { ...SESSION_COOKIE_OPTIONS },
    idGenerator: () => randomBytes(32).toString('base64url'),
    store,
    // Every response of a session moves its last-seen time (the idle timeout); a visitor's session is stored only
    // once it holds something (a signed-in user; a notice for the next page).
    rolling: true,
    saveUninitialized: false,
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** This session's id as the store keeps it (to end every other session of a user but this one). */
    sessionDigest(): Buffer;
  }
  interface FastifyReply {
    /** Drops the session cookie from the browser (signing out). */
    clearSessionCookie(): FastifyReply;
  }
}

/** Cookies and sessions on our PostgreSQL store, with the session's own decorators. */
export default fp<SessionTimeouts>(
  async (fastify, timeouts) => {
    // The sessions of requests htmx made: the live refresh's, the only ones the dashboard's pages make.
    const refreshes = new WeakMap<Session, FastifyRequest['session']>();
    const store = new PostgresSessionStore(
      fastify.storage.sessions,
      timeouts,
      () => fastify.now(),
      (error) => fastify.log.error({ err: error }, 'a session store callback threw twice'),
      (stored) => refreshes.get(stored)?.isModified() === false,
    );
    await fastify.register(cookie);
    await fastify.register(session, sessionOptions(store));
    fastify.addHook('preHandler', async (request) => {
      if (request.method === 'GET' && request.headers['hx-request'] === 'true' && request.session)
        refreshes.set(request.session, request.session);
    });
    fastify.decorateRequest('sessionDigest', function (this: FastifyRequest) {
      return sessionDigest(this.session.sessionId);
    });
    fastify.decorateReply('clearSessionCookie', function (this: FastifyReply) {
      return this.clearCookie(SESSION_COOKIE, SESSION_COOKIE_OPTIONS);
    });
  },
  { name: 'dashboard-session', fastify: '5.x', dependencies: ['config', 'db'] },
);
