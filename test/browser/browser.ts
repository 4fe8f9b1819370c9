// Real-browser tests: the service as a real process (HTTPS, self-signed certificate) driven through Debian's chromium
// by playwright-core (no browser download). Without chromium the tests skip with a message; under CI=true they fail.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { afterAll } from 'vitest';
import { freshDatabase } from '../helpers/database.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

export const CHROMIUM = '/usr/bin/chromium';

/** Whether the browser tests can run here; under CI a missing chromium is an error, not a skip. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `${CHROMIUM} is not installed: apt-get install -y --no-install-recommends chromium`;
  if (process.env.CI === 'true') throw new Error(`browser tests need chromium under CI: ${message}`);
  process.stderr.write(`skipping browser tests: ${message}\n`);
  return false;
}

export interface BrowserWorld {
  server: ServerProcess;
  databaseUrl: string;
  baseUrl: string;
  browser: Browser;
  /** A fresh context (its own cookies) that accepts the self-signed certificate. */
  context(): Promise<BrowserContext>;
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

export async function startBrowserWorld(env: Record<string, string> = {}): Promise<BrowserWorld> {
  const { url: databaseUrl } = await freshDatabase();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'oct-browser-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, DISPATCH_ENABLED: 'false', WEBHOOK_DELIVERY_ENABLED: 'false', LOG_LEVEL: 'info', ...env });
  cleanups.push(async () => { await server.stop(); });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Chromium's sandbox needs user namespaces, which root in a container does not get.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  cleanups.push(() => browser.close());
  const baseUrl = `https://127.0.0.1:${server.port}`;
  return {
    server,
    databaseUrl,
    baseUrl,
    browser,
    context: () => browser.newContext({ ignoreHTTPSErrors: true, baseURL: baseUrl }),
  };
}
