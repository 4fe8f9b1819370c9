// Builds the real app on a fresh database, as server.ts does, for tests that use inject(), and the test's own Prisma
// client on that database (prismaOf) for assertions: the app exposes none. An app built inside a test (or its
// beforeEach) is closed when that test ends; one built in beforeAll, when the file ends (file-end.ts).
import type pg from 'pg';
import { onTestFinished } from 'vitest';
import { buildApp, type App, type AppOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { BACKGROUND_POOL, createPrisma, REQUEST_POOL, sqlPool, type PrismaClient } from '../../src/storage/database.js';
import { storageOver } from '../../src/storage/storage.js';
import { freshDatabase, testSecretsKey } from './database.js';
import { atFileEnd } from './file-end.js';

export interface TestApp {
  app: App;
  config: Config;
  databaseUrl: string;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: () => Date;
  /** Share a database with another app instance (two replicas) instead of a fresh one. */
  databaseUrl?: string;
  jobs?: AppOptions['jobs'];
  /** Make the app's two pools here, so that the test can watch or hold them (poolsOf). */
  pools?: boolean;
}

/** The app's two connection pools, for a test about them (an app built with `pools: true`). */
export interface AppPools {
  requests: pg.Pool;
  background: pg.Pool;
}

const urls = new WeakMap<App, string>();
const pools = new WeakMap<App, AppPools>();
/** The test clients by database: the apps of one database (replicas, an app beside its twin) share one. */
const clients = new Map<string, { client: PrismaClient; apps: Set<App> }>();

/**
 * The test's Prisma client on the database of `app` (made on first use, disconnected when the app closes or the file
 * ends): reads for assertions, and the deliberate writes of test/helpers/seed.ts. Its own small pool, so a test that
 * holds the app's connections can still look.
 */
export function prismaOf(app: App): PrismaClient {
  // An app a test built itself (buildApp) names its database in its config.
  const url = urls.get(app) ?? app.config.DATABASE_URL;
  if (!url) throw new Error('prismaOf: an app on the embedded database; build it with buildTestApp');
  // One client per database, not per app: four workers' files of several apps each, at two connections an app, took
  // the machine's PostgreSQL past its 100 connections in CI.
  let entry = clients.get(url);
  if (!entry) {
    entry = { client: createPrisma(url, { max: 2 }), apps: new Set() };
    clients.set(url, entry);
  }
  entry.apps.add(app);
  return entry.client;
}

/** The pools of an app built with `pools: true`. */
export function poolsOf(app: App): AppPools {
  const found = pools.get(app);
  if (!found) throw new Error('poolsOf: build the app with buildTestApp({ pools: true })');
  return found;
}

/** Lets go of `app`'s client once no other open app of its database reads through it. */
async function disconnect(app: App): Promise<void> {
  for (const [url, entry] of clients) {
    if (!entry.apps.delete(app) || entry.apps.size > 0) continue;
    clients.delete(url);
    await entry.client.$disconnect();
  }
}

const open = new Set<App>();
atFileEnd(async () => {
  for (const app of [...open].reverse()) await app.close();
  open.clear();
  const left = [...clients.values()];
  clients.clear();
  for (const { client } of left) await client.$disconnect();
});

/** Closes an app now (a replica a test stops on purpose); the file's teardown will not close it again. */
export async function closeTestApp(app: App): Promise<void> {
  if (!open.delete(app)) return;
  await app.close();
  await disconnect(app);
}

/**
 * Closes the app when the current test ends, if there is one. Each app holds up to two pools and its listeners:
 * kept until the file ended, a file of sixteen apps beside three other files went past PostgreSQL's 100 connections.
 */
function closeAfterCurrentTest(app: App): void {
  try {
    onTestFinished(() => closeTestApp(app));
  } catch {
    // Not inside a test (beforeAll, or the file's top level): closed when the file ends (above).
  }
}

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const url = options.databaseUrl ?? (await freshDatabase()).url;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: '.data/test',
    // The run's key: what the test's own storages and callctl seal with (SECRETS_KEY: '' leaves it to DATA_DIR).
    SECRETS_KEY: testSecretsKey(),
    DISPATCH_ENABLED: 'false',
    WEBHOOK_DELIVERY_ENABLED: 'false',
    ...options.env,
    DATABASE_URL: url,
  });
  // Made as plugins/db.ts makes them, kept here to be watched.
  const made = options.pools
    ? { requests: createPrisma(url, REQUEST_POOL), background: createPrisma(url, BACKGROUND_POOL) }
    : null;
  const app = await buildApp({
    config,
    databaseUrl: url,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.jobs ? { jobs: options.jobs } : {}),
    ...(made ? { storages: { requests: storageOver(made.requests), background: storageOver(made.background) } } : {}),
  });
  urls.set(app, url);
  if (made) pools.set(app, { requests: sqlPool(made.requests), background: sqlPool(made.background) });
  open.add(app);
  closeAfterCurrentTest(app);
  return { app, config, databaseUrl: url };
}
