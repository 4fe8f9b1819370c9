// Opens the service's PostgreSQL: DATABASE_URL when configured, else the embedded server; and the Prisma client.
import { PrismaPg } from '@prisma/adapter-pg';
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

export function createPrisma(url: string, options: PrismaOptions = {}): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 2_000,
    idleTimeoutMillis: 30_000,
  });
  return new PrismaClient({ adapter });
}

export type { PrismaClient };
