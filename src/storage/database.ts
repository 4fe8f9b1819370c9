// Opens the service's PostgreSQL: DATABASE_URL when configured, else the embedded server; and the Prisma client.
import { AsyncLocalStorage } from 'node:async_hooks';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import type { Config } from '../config.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';

export interface DatabaseLocation {
  url: string;
  embedded: boolean;
  /** Stops the embedded server when this process owns it; a no-op for DATABASE_URL. */
  release(): Promise<void>;
}

export async function locateDatabase(config: Config, role: 'server' | 'cli', log?: (msg: string) => void): Promise<DatabaseLocation> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: false, release: async () => {} };
  const embedded = await startEmbeddedPostgres(config.dataDir, role, log);
  return { url: embedded.url, embedded: true, release: () => embedded.close() };
}

export interface PrismaOptions {
  /** Pool size; small by default because every replica holds its own. */
  max?: number;
  /** Fail a query that cannot get a connection quickly rather than queue forever. */
  connectionTimeoutMillis?: number;
}

const pools = new WeakMap<PrismaClient, pg.Pool>();

/**
 * Requests wait for a pooled connection before background work does. The dispatcher and the webhook worker can
 * queue hundreds of statements at once (every due call, every finished attempt); in a FIFO queue a trigger then
 * waited behind all of them, past the pool's 2 s limit, and was answered 503 while the database was fine.
 */
const foreground = new AsyncLocalStorage<true>();

/** Runs `work` and everything it starts asynchronously (a request's remaining hooks and handler) as foreground. */
export function inForeground<T>(work: () => T): T {
  return foreground.run(true, work);
}

/**
 * Runs `work` as background even when called from a request: background loops woken by a request (the dispatcher
 * after an acceptance) must not inherit its place in the pool queue nor its short wait for a connection.
 */
export function inBackground<T>(work: () => T): T {
  return foreground.exit(work);
}

/** Whether the caller runs as foreground (tests). */
export function isForeground(): boolean {
  return foreground.getStore() === true;
}

type Waiter = { foreground?: true };

/**
 * How long background work may wait for a connection. Requests keep the pool's short limit (fail fast); background
 * work queued behind them must not fail for waiting: a dial whose bookkeeping timed out failed its call with
 * provider_error, and an unrecorded webhook attempt was sent again.
 */
export const BACKGROUND_WAIT_MS = 15_000;

class ForegroundFirstPool extends pg.Pool {
  // pg-pool reads its connection timeout and queues a waiter synchronously inside connect() (pool.query() goes
  // through it too). A foreground waiter is moved from the end to just behind the foreground waiters already queued
  // (first come, first served among them), ahead of every background one; a background waiter gets the longer wait.
  override connect(...args: unknown[]): never {
    const asForeground = isForeground();
    const options = (this as unknown as { options: { connectionTimeoutMillis?: number } }).options;
    const limit = options.connectionTimeoutMillis;
    if (!asForeground && limit) options.connectionTimeoutMillis = Math.max(limit, BACKGROUND_WAIT_MS);
    let result: unknown;
    try {
      result = (pg.Pool.prototype.connect as (...a: unknown[]) => unknown).apply(this, args);
    } finally {
      options.connectionTimeoutMillis = limit;
    }
    const queue = (this as unknown as { _pendingQueue?: Waiter[] })._pendingQueue;
    if (asForeground && queue && queue.length > 1) {
      const waiter = queue.pop()!;
      waiter.foreground = true;
      let at = 0;
      while (at < queue.length && queue[at]!.foreground) at++;
      queue.splice(at, 0, waiter);
    }
    return result as never;
  }
}

/**
 * Prisma's statements as named (prepared) statements: the server parses and plans each once per connection instead
 * of on every query (the key lookup's join cost 0.26 ms of server CPU unnamed, 0.07 ms named). A name is never
 * reused for another text; past the cap (only variable-length IN lists could get there) statements stay unnamed.
 */
const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 2_000;
function statementName({ sql }: { sql: string }): string {
  let name = statementNames.get(sql);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) statementNames.set(sql, (name = `oct_p${statementNames.size}`));
  return name ?? ''; // pg: an empty name is the unnamed statement
}

const sessionSetup: string[] = [];
let sessionSetupRefused = false;

/**
 * A statement every pooled connection runs once, before its first use: creating a session's temporary function.
 * Modules register at import, before any pool connects. Such statements may only be optimisations: if the server
 * refuses one (e.g. TEMPORARY revoked), connections are used without it and sessionsPrepared() turns false.
 */
export function prepareEverySession(sql: string) {
  sessionSetup.push(sql);
}

/** False once the server refused the session setup: its users take their slower path. */
export function sessionsPrepared(): boolean {
  return !sessionSetupRefused;
}

export function createPrisma(url: string, options: PrismaOptions = {}): PrismaClient {
  // The pool is ours (handed to the adapter, which ends it on $disconnect) so that hot paths can share it.
  const pool = new ForegroundFirstPool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 1_500,
    // A database that stops answering (hung, partitioned) must fail a query, not hold its request forever.
    query_timeout: 1_500,
    idleTimeoutMillis: 30_000,
    // pg-pool runs this on each new connection before handing it out; a failure discards the connection.
    verify: (client: pg.PoolClient, done: (error?: Error) => void) => {
      if (sessionSetup.length === 0 || sessionSetupRefused) return done();
      client.query(sessionSetup.join(';\n')).then(() => done(), (error: Error) => {
        // Refused by the server: the connection is fine, only the optimisation is off. Anything else: discard it.
        if (error instanceof pg.DatabaseError) {
          sessionSetupRefused = true;
          return done();
        }
        done(error);
      });
    },
  } as pg.PoolConfig);
  // An idle connection the server closes (restart, DROP DATABASE ... WITH (FORCE)) errors on the pool, which drops
  // it by itself; unobserved, that error would stop the process.
  pool.on('error', () => undefined);
  // The same for a connection that is checked out when the server goes away: its query rejects (and is handled
  // where it was made), but the client also emits 'error', which pg-pool only listens to while it is idle.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const prisma = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true, statementNameGenerator: statementName }),
    // Prisma's own wait to start an interactive transaction (2 s by default) would cut background waits short; a
    // request's transaction still fails at the pool's limit, as before.
    transactionOptions: { maxWait: BACKGROUND_WAIT_MS },
  });
  pools.set(prisma, pool);
  return prisma;
}

/**
 * The pg pool under a client made by createPrisma, for the request hot path: a plain statement there costs a
 * fraction of a Prisma query's CPU, and the connections are the same ones Prisma uses (no second pool).
 */
export function sqlPool(prisma: PrismaClient): pg.Pool {
  const pool = pools.get(prisma);
  if (!pool) throw new Error('not a client made by createPrisma');
  return pool;
}

export type { PrismaClient };
