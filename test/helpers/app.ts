// Builds the real app on a fresh database, as server.ts does, for tests that use inject().
import { afterAll } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { freshDatabase } from './database.js';

export interface TestApp {
  app: App;
  config: Config;
  databaseUrl: string;
}

export async function buildTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const { url } = await freshDatabase();
  const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: '.data/test', DISPATCH_ENABLED: 'false', ...env, DATABASE_URL: url });
  const app = await buildApp({ config, databaseUrl: url });
  afterAll(async () => {
    await app.close();
  });
  return { app, config, databaseUrl: url };
}
