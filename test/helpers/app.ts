// Builds the real app on a fresh database, as server.ts does, for tests that use inject().
import { afterAll } from 'vitest';
import { buildApp, type App, type AppOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { freshDatabase } from './database.js';

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

export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const url = options.databaseUrl ?? (await freshDatabase()).url;
  const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: '.data/test', DISPATCH_ENABLED: 'false', WEBHOOK_DELIVERY_ENABLED: 'false', ...options.env, DATABASE_URL: url });
  const app = await buildApp({ config, databaseUrl: url, ...(options.clock ? { clock: options.clock } : {}), ...(options.jobs ? { jobs: options.jobs } : {}) });
  afterAll(async () => {
    await app.close();
  });
  return { app, config, databaseUrl: url };
}
