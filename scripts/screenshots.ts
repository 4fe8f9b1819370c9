// npm run screenshots: the README's pictures of the dashboard, taken from a real run. Starts the service as a real
// process (HTTPS, simulated dialer, webhook delivery on), makes a small agency through the src/admin functions callctl
// uses (a client, agents, keys, webhooks to a receiver on 127.0.0.1 that fails its first request), triggers calls
// through the API, waits for them and their deliveries to end, signs in with chromium (playwright-core, Debian's
// /usr/bin/chromium, no browser download) and saves call-detail.png and api-webhooks.png into a new temporary folder,
// or into docs/screenshots/ (tracked files) only when asked with --update.
// test/browser/screenshots.test.ts runs the same makeShowcase and captureScreenshots (into docs/ only with SCREENSHOTS=1).
//
// The database: DATABASE_URL, a PostgreSQL server on which a fresh database is made and dropped afterwards; unset,
// the embedded PostgreSQL in a temporary DATA_DIR, as `npm start` does.
// Needs Debian's chromium (apt-get install -y --no-install-recommends chromium).
// Usage: npm run screenshots [-- --out <dir> | --update]
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { chromium, type Browser } from 'playwright-core';
import { createAgency, createClient, generateKey } from '../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../src/admin/agents.js';
import { createUser, setPasswordWithLink } from '../src/admin/users.js';
import { setWebhook } from '../src/admin/webhooks.js';
import { loadConfig } from '../src/config.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { findCallDetail } from '../src/storage/call-history.js';
import { createPrisma, locateDatabase, type PrismaClient } from '../src/storage/database.js';
// The end-to-end tests' way of running the server as a real process and calling its HTTPS port (no test framework in it).
import { httpsRequest, startServer } from '../test/helpers/server-process.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS_DIR = path.join(PROJECT_ROOT, 'docs', 'screenshots');

/** The server's settings for the showcase: calls that ring and talk a few seconds, webhooks to a local receiver. */
export const SHOWCASE_ENV: Record<string, string> = {
  DISPATCH_ENABLED: 'true',
  SIMULATED_RING_MS: '1200',
  SIMULATED_TALK_MS: '3500',
  WEBHOOK_DELIVERY_ENABLED: 'true',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_TIMEOUT_MS: '3000',
};

export interface ShowcaseReceiver {
  url: string;
  /** Requests received so far. */
  count(): number;
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1: its first request is answered 503 (the delivery log then shows a retry), every
 * other one 200.
 */
export async function startShowcaseReceiver(): Promise<ShowcaseReceiver> {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(received === 1 ? 503 : 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/calls`,
    count: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Showcase {
  email: string;
  password: string;
  /** The call the call-detail picture shows. */
  callId: string;
  /** Every call made, all ended with their deliveries when makeShowcase returns. */
  callIds: string[];
}

async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * An agency as a person would set it up, made on the server's database with the functions callctl uses, and calls
 * triggered through the server's API (`port`); returns once every call has ended and no delivery is left to send.
 */
export async function makeShowcase(
  prisma: PrismaClient,
  options: { port: number; receiver: ShowcaseReceiver },
): Promise<Showcase> {
  const operator = { kind: 'operator' } as const;
  const email = 'maria.ortega@northwind-growth.example';
  const password = `showcase ${randomBytes(9).toString('base64url')}`;

  const { id: agencyId } = await createAgency(prisma, { name: 'Northwind Growth Partners' });
  const { token } = await createUser(prisma, { accountId: agencyId, email, actor: operator });
  const set = await setPasswordWithLink(prisma, { token, password, ip: null, now: new Date() });
  if (!set.ok) throw new Error(set.problem);
  const riley = await createAgent(
    prisma,
    { accountId: agencyId, name: 'Riley (new leads)', phone: '+15125550142', timezone: 'America/Chicago' },
    operator,
  );
  await createAgent(
    prisma,
    {
      accountId: agencyId,
      name: 'Sam (renewals)',
      phone: '+15125550177',
      timezone: 'America/Chicago',
      windows: ['mon-fri 09:00-17:30', 'sat 10:00-14:00'],
      outsideWindow: 'queue',
    },
    operator,
  );
  await setDefaultAgent(prisma, agencyId, riley.id, operator);
  const agencyKey = (await generateKey(prisma, agencyId, operator)).key;
  await setWebhook(prisma, agencyId, options.receiver.url, { allowPrivate: true }, operator);

  const { id: clientId } = await createClient(prisma, { agencyId, name: 'Bayside Dental' }, operator);
  const frontDesk = await createAgent(
    prisma,
    {
      accountId: clientId,
      name: 'Bayside front desk',
      phone: '+14155550123',
      timezone: 'America/Los_Angeles',
    },
    operator,
  );
  await setDefaultAgent(prisma, clientId, frontDesk.id, operator);
  const clientKey = (await generateKey(prisma, clientId, operator)).key;
  await setWebhook(prisma, clientId, `${options.receiver.url}?client=bayside`, { allowPrivate: true }, operator);

  const trigger = async (key: string, body: Record<string, unknown>) => {
    const res = await httpsRequest(options.port, '/api/v1/calls/trigger', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 200) throw new Error(`trigger answered ${res.status}: ${res.body}`);
    return (JSON.parse(res.body) as { call_id: string }).call_id;
  };

  // The featured call first: its call.started is the receiver's first request, answered 503 and retried.
  const callId = await trigger(agencyKey, {
    phone_number: '+15125550187',
    name: 'Dana Whitfield',
    email: 'dana.whitfield@example.com',
    metadata: {
      lead_id: 'LD-20931',
      source: 'google_ads',
      campaign: 'Invisalign – spring',
      lead_score: 87,
      consented_to_call: true,
      preferred_callback: null,
      notes: 'Asked about Saturday appointments',
    },
  });
  await until('the first webhook request', async () => (options.receiver.count() > 0 ? true : null), 30_000);
  const callIds = [callId];
  callIds.push(
    await trigger(agencyKey, {
      phone_number: '+15125550133',
      name: 'Marcus Lee',
      metadata: { lead_id: 'LD-20932', source: 'facebook_lead_form', lead_score: 64 },
    }),
  );
  callIds.push(
    await trigger(agencyKey, {
      phone_number: '+15005550001',
      name: 'Priya Natarajan',
      metadata: { lead_id: 'LD-20933', source: 'website_chat' },
    }),
  );
  callIds.push(
    await trigger(clientKey, {
      phone_number: '+14155550188',
      name: 'Tom Becker',
      email: 'tom.becker@example.com',
      metadata: { appointment: 'cleaning', reminder: true },
    }),
  );
  callIds.push(
    await trigger(clientKey, {
      phone_number: '+15005550002',
      name: 'Alicia Gomez',
      metadata: { appointment: 'consultation', reminder: true },
    }),
  );

  await until(
    'every call and delivery to end',
    async () => {
      for (const id of callIds) {
        const call = await findCallDetail(prisma, id);
        if (!call || !['completed', 'failed'].includes(call.status)) return null;
        if (call.deliveries.length < 2 || call.deliveries.some((d) => d.status === 'pending')) return null;
      }
      return true;
    },
    60_000,
  );
  return { email, password, callId, callIds };
}

export interface Shot {
  file: string;
  path: string;
  title: string;
}

/**
 * Signs in as the showcase's user and saves full-page PNGs of the call detail view and Settings → API & Webhooks
 * into `outDir`; throws when a page is not the one expected (a sign-in page is never saved as a picture).
 */
export async function captureScreenshots(
  browser: Browser,
  options: { baseUrl: string; showcase: Showcase; outDir: string },
): Promise<Shot[]> {
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    baseURL: options.baseUrl,
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    colorScheme: 'light',
  });
  try {
    const page = await context.newPage();
    await page.goto('/dashboard/sign-in');
    await page.fill('input[name=email]', options.showcase.email);
    await page.fill('input[name=password]', options.showcase.password);
    await Promise.all([page.waitForURL(/\/dashboard$/), page.click('main button[type=submit]')]);
    mkdirSync(options.outDir, { recursive: true });
    const shots: Shot[] = [];
    for (const [file, url, title] of [
      ['call-detail.png', `/dashboard/calls/${options.showcase.callId}`, 'Call to +15125550187'],
      ['api-webhooks.png', '/dashboard/settings/api-webhooks', 'Settings → API & Webhooks'],
    ] as const) {
      const response = await page.goto(url);
      const shown = await page.textContent('h1');
      if (response?.status() !== 200 || shown !== title)
        throw new Error(`${url} answered ${response?.status()} with "${shown}", not "${title}"`);
      const target = path.join(options.outDir, file);
      await page.screenshot({ path: target, fullPage: true });
      shots.push({ file, path: target, title });
    }
    return shots;
  } finally {
    await context.close();
  }
}

async function main() {
  const outIndex = process.argv.indexOf('--out');
  const outDir =
    outIndex > 0
      ? path.resolve(process.argv[outIndex + 1] ?? '')
      : process.argv.includes('--update')
        ? SCREENSHOTS_DIR
        : mkdtempSync(path.join(os.tmpdir(), 'oct-screenshots-out-'));
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `npm run screenshots needs Chromium at ${CHROMIUM}: apt-get install -y --no-install-recommends chromium`,
    );
  }
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'oct-screenshots-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = { ...SHOWCASE_ENV, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    const adminUrl = process.env.DATABASE_URL;
    if (adminUrl) {
      const name = `oct_screenshots_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      cleanups.push(async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      });
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      env.DATABASE_URL = url.toString();
    } else {
      env.DATABASE_URL = '';
    }
    const receiver = await startShowcaseReceiver();
    cleanups.push(() => receiver.close());
    process.stdout.write('starting the service...\n');
    const server = await startServer({ ...env, LOG_LEVEL: 'info' });
    cleanups.push(() => server.stop());
    // The server migrated the database (and, without DATABASE_URL, started the embedded PostgreSQL it shares).
    const { url: databaseUrl } = env.DATABASE_URL
      ? { url: env.DATABASE_URL }
      : await locateDatabase(loadConfig({ DATA_DIR: dataDir }), 'cli');
    const prisma = createPrisma(databaseUrl, { max: 2 });
    cleanups.push(() => prisma.$disconnect());
    process.stdout.write('making the agency and its calls...\n');
    const showcase = await makeShowcase(prisma, { port: server.port, receiver });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
    cleanups.push(() => browser.close());
    const shots = await captureScreenshots(browser, { baseUrl: `https://127.0.0.1:${server.port}`, showcase, outDir });
    for (const shot of shots)
      process.stdout.write(`wrote ${path.relative(process.cwd(), shot.path)} (${shot.title})\n`);
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((error: Error) => process.stderr.write(`cleanup: ${error.message}\n`));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error: Error) => {
    process.stderr.write(`${error.stack ?? error.message}\n`);
    process.exit(1);
  });
}
