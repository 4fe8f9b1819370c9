// A fresh, migrated database for one test file, cloned from the run's template and dropped when the file ends
// (file-end.ts).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { SecretBox } from '../../src/domain/secret-box.js';
import { loadSecrets } from '../../src/secrets/keys.js';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { storageOver, type Storage } from '../../src/storage/storage.js';
import { atFileEnd } from './file-end.js';

export function databaseUrl(name: string): string {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const created: string[] = [];
const clients: PrismaClient[] = [];
atFileEnd(async () => {
  for (const prisma of clients.splice(0)) await prisma.$disconnect();
  const names = created.splice(0);
  if (names.length)
    await admin(async (c) => {
      for (const name of names) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
});

/** Creates the database now (migrated, unless `empty`); it is dropped after the file's tests. */
export async function freshDatabase(options: { empty?: boolean } = {}): Promise<{ url: string; name: string }> {
  const name = `${inject('testDatabasePrefix')}${randomBytes(6).toString('hex')}`;
  // The template must have no other connections while it is copied: retry briefly if a sibling is cloning.
  for (let attempt = 0; ; attempt++) {
    try {
      const template = options.empty ? 'template0' : inject('templateDatabase');
      await admin(async (c) => {
        await c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
        // A commit returns without waiting for its WAL to reach the disk (it is as visible to every other session at
        // once): the suite makes thousands of commits, each of which waited on the disk's flush. Only a crash of
        // PostgreSQL itself could lose one, and no test crashes the server its databases live on.
        await c.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
      });
      break;
    } catch (error) {
      if (attempt > 50 || !/being accessed by other users/.test((error as Error).message)) throw error;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
    }
  }
  created.push(name);
  return { url: databaseUrl(name), name };
}

/** A fresh database plus a Prisma client on it, disconnected after the file's tests. */
export async function freshPrisma(): Promise<{ url: string; prisma: PrismaClient }> {
  const { url } = await freshDatabase();
  const prisma = createPrisma(url, { max: 4 });
  clients.push(prisma);
  return { url, prisma };
}

/**
 * The run's SECRETS_KEY (base64): the key of .data/test/secrets.key, made by the first file that asks. Test apps,
 * server processes, callctl and a test's own storages all seal with it, whatever DATA_DIR a test gives them.
 */
export function testSecretsKey(): string {
  const { file } = loadSecrets(loadConfig({ DATA_DIR: '.data/test' }));
  return fs.readFileSync(file!, 'utf8').trim();
}
let testBox: SecretBox | null = null;
const testSecrets = () => (testBox ??= loadSecrets(loadConfig({ SECRETS_KEY: testSecretsKey() })).box);

/**
 * The storage over `db` when it is a client made by createPrisma (freshPrisma's, a browser world's), with the run's
 * secrets key; else `db` itself.
 */
export function storageOf(db: Storage | PrismaClient): Storage {
  if (!('$transaction' in db)) return db;
  const storage = storageOver(db);
  storage.secrets.use(testSecrets);
  return storage;
}

/** The Redis URL of the run, or null: Redis tests use `describe.skipIf(!redisUrl())` and say so. */
export function redisUrl(): string | null {
  return inject('redisUrl');
}
