// Real-browser tests: the service as a real process (HTTPS, self-signed certificate) driven through Debian's Chromium
// headless shell by playwright-core (no browser download). Without it the tests skip with a message; under CI=true
// they fail.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { createAgency } from '../../src/admin/accounts.js';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { createUserWithPassword } from '../dashboard/helpers.js';
import { freshDatabase, storageOf } from '../helpers/database.js';
import { atFileEnd } from '../helpers/file-end.js';
import { httpsRequest, startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * Chromium's headless shell (Debian's chromium-headless-shell): the same Blink, V8 and network stack as the chromium
 * package, without the desktop browser around them, and what Playwright itself runs for headless tests. It draws the
 * same pictures (docs/screenshots/ came out the same) for half the CPU: every-page and screenshots took 108 CPU-s in
 * chromium and 54 in the shell (docs/performance.md#the-browser-tests-headless-shell).
 */
export const CHROMIUM = '/usr/bin/chromium-headless-shell';

/** Whether the browser tests can run here; under CI a missing chromium is an error, not a skip. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `${CHROMIUM} is not installed: apt-get install -y --no-install-recommends chromium-headless-shell`;
  if (process.env.CI === 'true') throw new Error(`browser tests need Chromium under CI: ${message}`);
  process.stderr.write(`skipping browser tests: ${message}\n`);
  return false;
}

export interface BrowserWorld {
  server: ServerProcess;
  databaseUrl: string;
  baseUrl: string;
  browser: Browser;
  /** A small pool on the server's database, for the src/admin functions callctl uses (disconnected afterwards). */
  prisma: PrismaClient;
  /** A fresh context (its own cookies) that accepts the self-signed certificate; `options` add to that (a zone…). */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
}

const cleanups: (() => Promise<void>)[] = [];
atFileEnd(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

export async function startBrowserWorld(env: Record<string, string> = {}): Promise<BrowserWorld> {
  const { url: databaseUrl } = await freshDatabase();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'oct-browser-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    DISPATCH_ENABLED: 'false',
    WEBHOOK_DELIVERY_ENABLED: 'false',
    LOG_LEVEL: 'info',
    ...env,
  });
  cleanups.push(async () => {
    await server.stop();
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Chromium's sandbox needs user namespaces, which root in a container does not get.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  cleanups.push(() => browser.close());
  const prisma = createPrisma(databaseUrl, { max: 2 });
  cleanups.push(() => prisma.$disconnect());
  const baseUrl = `https://127.0.0.1:${server.port}`;
  return {
    server,
    databaseUrl,
    baseUrl,
    browser,
    prisma,
    context: (options = {}) => browser.newContext({ ignoreHTTPSErrors: true, baseURL: baseUrl, ...options }),
  };
}

export const PASSWORD = 'a long and happy passphrase';

/**
 * A new agency (agency plan) and its first user, whose password is PASSWORD, through the src/admin functions callctl
 * uses (the password's hash is the tests' cheap one: test/dashboard/helpers.ts). The set-password link itself is
 * every-page's and the dashboard file's subject.
 */
export async function agencyWithUser(
  world: BrowserWorld,
  name: string,
  email: string,
): Promise<{ accountId: string; userId: string; email: string }> {
  const { id: accountId } = await createAgency(storageOf(world.prisma), { name });
  const userId = await createUserWithPassword(world.prisma, accountId, email, { password: PASSWORD });
  return { accountId, userId, email };
}

export interface SignedIn {
  page: Page;
  /** Every dialog the page opened (each dismissed): markup that ran would show here. */
  dialogs: string[];
}

/** A fresh context signed in through the sign-in form, on the Overview. */
export async function signIn(
  world: BrowserWorld,
  email: string,
  password = PASSWORD,
  options: BrowserContextOptions = {},
): Promise<SignedIn> {
  const context = await world.context(options);
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto('/dashboard/sign-in');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  await Promise.all([page.waitForURL(/\/dashboard$/), page.click('main button[type=submit]')]);
  return { page, dialogs };
}

/** POST /api/v1/calls/trigger on the server's HTTPS port (its self-signed certificate accepted), as an integrator would. */
export async function apiTrigger(
  world: BrowserWorld,
  key: string,
  body: Record<string, unknown> = { phone_number: '+14155552671' },
) {
  const res = await httpsRequest(world.server.port, '/api/v1/calls/trigger', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
}

/** Reloads `page` until `done` holds for the text of `selector` (background work finishes on its own schedule). */
export async function reloadUntil(
  page: Page,
  selector: string,
  done: (text: string) => boolean,
  timeoutMs = 15_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = (await page.textContent(selector)) ?? '';
    if (done(text)) return text;
    if (Date.now() > deadline)
      throw new Error(`${page.url()}: ${selector} never became as expected; last text:\n${text}`);
    await new Promise((r) => setTimeout(r, 250));
    await page.reload();
  }
}

/** Clicks what submits a form (or follows a link) and waits for the page it leads to (the 303's GET included). */
export async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}
