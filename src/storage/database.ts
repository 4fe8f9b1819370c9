// Opens the service's PostgreSQL: DATABASE_URL when configured, else the embedded server; and the Prisma client.
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { useNamedStatements } from './statements.js';

export interface DatabaseLocation {
  url: string;
  embedded: boolean;
  /** Stops the embedded server when this process owns it; a no-op for DATABASE_URL. */
  release(): Promise<void>;
}

export async function locateDatabase(
  /** The service's config (src/config.ts): DATABASE_URL when set, else the embedded server under dataDir. */
  config: { DATABASE_URL?: string | undefined; dataDir: string },
  role: 'server' | 'cli',
  log?: (msg: string) => void,
): Promise<DatabaseLocation> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: false, release: async () => {} };
  const embedded = await startEmbeddedPostgres(config.dataDir, role, log);
  return { url: embedded.url, embedded: true, release: () => embedded.close() };
}

export interface PrismaOptions {
  /** Pool size; small because every replica holds its own. */
  max?: number;
  /**
   * How long a query may wait for a pooled connection (and for a new one to open) before it fails. Work that is not
   * a request (the CLI, scripts, tests) waits as long as background work.
   */
  connectionTimeoutMillis?: number;
}

/**
 * How long background work may wait for a connection. Requests keep a short limit (fail fast); background work must
 * not fail for waiting: a dial whose bookkeeping timed out failed its call with provider_error, and an unrecorded
 * webhook attempt was sent again.
 */
export const BACKGROUND_WAIT_MS = 15_000;

/**
 * Each replica's connections, in two pools so that requests never queue behind background work: the dispatcher and
 * the webhook worker can queue hundreds of statements at once (every due call, every finished attempt), and a
 * trigger waiting behind them was answered 503 while the database was fine. Requests fail fast when their pool is
 * exhausted; background work waits. About as many connections in all as the one pool had (10).
 */
export const REQUEST_POOL = { max: 6, connectionTimeoutMillis: 1_500 } as const satisfies PrismaOptions;
export const BACKGROUND_POOL = { max: 4, connectionTimeoutMillis: BACKGROUND_WAIT_MS } as const satisfies PrismaOptions;

const pools = new WeakMap<PrismaClient, pg.Pool>();

/**
 * Prisma's statements as named (prepared) statements: the server parses and plans each once per connection instead of
 * on every query, which is most of a short statement's server CPU (docs/performance.md#named-statements). A name is
 * never reused for another text; past the cap (only variable-length IN lists could get there) statements stay unnamed.
 */
const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 2_000;
function statementName({ sql }: { sql: string }): string {
  let name = statementNames.get(sql);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS)
    statementNames.set(sql, (name = `oct_p${statementNames.size}`));
  return name ?? ''; // pg: an empty name is the unnamed statement
}

/**
 * `?pgbouncer=true` on the URL (Prisma's convention) says a transaction-pooling proxy stands in front of PostgreSQL: a
 * statement prepared on one server connection would be missing on the next, so every statement goes unnamed (parsed
 * each time). The parameter is removed before connecting.
 */
export function behindTransactionPooler(url: string): { url: string; pooler: boolean } {
  const parsed = new URL(url);
  if (parsed.searchParams.get('pgbouncer') !== 'true') return { url, pooler: false };
  parsed.searchParams.delete('pgbouncer');
  return { url: parsed.toString(), pooler: true };
}

export function createPrisma(databaseUrl: string, options: PrismaOptions = {}): PrismaClient {
  const { url, pooler } = behindTransactionPooler(databaseUrl);
  if (pooler) useNamedStatements(false);
  // The pool is ours (handed to the adapter, which ends it on $disconnect) so that hot paths can share it.
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? BACKGROUND_WAIT_MS,
    // A database that stops answering (hung, partitioned) must fail a query, not hold its request forever.
    query_timeout: 1_500,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection the server closes (restart, DROP DATABASE ... WITH (FORCE)) errors on the pool, which drops
  // it by itself; unobserved, that error would stop the process.
  pool.on('error', () => undefined);
  // The same for a connection that is checked out when the server goes away: its query rejects (and is handled
  // where it was made), but the client also emits 'error', which pg-pool only listens to while it is idle.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const prisma = new PrismaClient({
    adapter: new PrismaPg(pool, {
      disposeExternalPool: true,
      statementNameGenerator: pooler ? () => '' : statementName,
    }),
    // Prisma's own wait to start an interactive transaction (2 s by default) would cut background waits short; a
    // request's transaction still fails at its pool's limit.
    transactionOptions: { maxWait: BACKGROUND_WAIT_MS },
  });
  pools.set(prisma, pool);
  return prisma;
}

/**
 * The pg pool under a client made by createPrisma, for hand-written statements in src/storage/: a plain statement
 * costs a fraction of a Prisma query's CPU, and the connections are the ones that client uses (no third pool).
 */
export function sqlPool(prisma: PrismaClient): pg.Pool {
  const pool = pools.get(prisma);
  if (!pool) throw new Error('not a client made by createPrisma');
  return pool;
}

export type { PrismaClient };
