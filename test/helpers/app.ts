// Builds the real app on a fresh database, as server.ts does, for tests that use inject(). An app built inside a test
// (or its beforeEach) is closed when that test ends; one built in beforeAll, when the file ends (file-end.ts).
import { onTestFinished } from 'vitest';
import { buildApp, type App, type AppOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { freshDatabase } from './database.js';
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
}

const open = new Set<App>();
atFileEnd(async () => {
  for (const app of [...open].reverse()) await app.close();
  open.clear();
});

/** Closes an app now (a replica a test stops on purpose); the file's teardown will not close it again. */
export async function closeTestApp(app: App): Promise<void> {
  if (!open.delete(app)) return;
  await app.close();
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
    DISPATCH_ENABLED: 'false',
    WEBHOOK_DELIVERY_ENABLED: 'false',
    ...options.env,
    DATABASE_URL: url,
  });
  const app = await buildApp({
    config,
    databaseUrl: url,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.jobs ? { jobs: options.jobs } : {}),
  });
  open.add(app);
  closeAfterCurrentTest(app);
  return { app, config, databaseUrl: url };
}
