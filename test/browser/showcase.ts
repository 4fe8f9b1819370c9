// The showcase of `npm run screenshots` and the browser tests: a small agency made through the src/admin functions
// callctl uses (a client with its own user, agents, keys, webhooks to a receiver on 127.0.0.1 that fails its first
// request, do-not-call numbers), calls triggered through the API and waited for, and every page of dashboardPages,
// which test/browser/every-page.test.ts checks and pictures at 1280 px and at 390 px (<name>-1280.png,
// <name>-390.png; scripts/screenshots.ts runs it).
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createAgency, createClient, generateKey } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import { addToDoNotCall } from '../../src/admin/do-not-call.js';
import { createUser, setPasswordWithLink } from '../../src/admin/users.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { signContextToken } from '../../src/domain/context-token.js';
import { CONTEXT_TOKEN_KEY_PURPOSE } from '../../plugins/context-tokens.js';
import type { Storage } from '../../src/storage/index.js';
import { httpsRequest } from '../helpers/server-process.js';

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
/** What the showcase's runtime reports about Dana's call, her conversation starting at `answered`. */
function showcaseResult(answered: Date) {
  const at = (seconds: number) => new Date(answered.getTime() + seconds * 1000).toISOString();
  return {
    outcome: 'appointment_booked',
    summary:
      'Dana wants Invisalign and asked about Saturdays. Booked a free consultation for Saturday 10:30 at the ' +
      'Riverside office; she will bring her insurance card.',
    data: { appointment: 'Saturday 10:30', office: 'Riverside', insurance: 'Delta Dental' },
    transcript: [
      { speaker: 'agent', text: 'Hi Dana, this is Riley from Bright Smile Dental. Is now a good time?', at: at(0) },
      { speaker: 'callee', text: 'Yes, I asked about Invisalign. Do you have Saturday appointments?', at: at(5) },
      { speaker: 'agent', text: 'We do: this Saturday at 10:30 at our Riverside office. Shall I book it?', at: at(11) },
      { speaker: 'callee', text: 'Perfect, please do.', at: at(16) },
    ],
    recording_url: 'https://recordings.example.com/calls/dana-whitfield.mp3',
  };
}

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
  /** The agency's user (and the client's user below: the same password). */
  email: string;
  password: string;
  /** A user of the client Bayside Dental. */
  clientEmail: string;
  agencyId: string;
  clientId: string;
  /** An agent of the agency, and one of the client. */
  agentId: string;
  clientAgentId: string;
  /** The call the call-detail picture shows. */
  callId: string;
  /** A call of the client. */
  clientCallId: string;
  /** Every call made, all ended with their deliveries when makeShowcase returns. */
  callIds: string[];
  /** A call scheduled for tomorrow: still waiting. */
  waitingCallId: string;
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
  storage: Storage,
  options: { port: number; receiver: ShowcaseReceiver },
): Promise<Showcase> {
  const operator = { kind: 'operator' } as const;
  const email = 'maria.ortega@northwind-growth.example';
  const password = `showcase ${randomBytes(9).toString('base64url')}`;

  const { id: agencyId } = await createAgency(storage, { name: 'Northwind Growth Partners' });
  const { token } = await createUser(storage, { accountId: agencyId, email, actor: operator, now: new Date() });
  const set = await setPasswordWithLink(storage, { token, password, ip: null, now: new Date() });
  if (!set.ok) throw new Error(set.problem);
  const riley = await createAgent(
    storage,
    {
      accountId: agencyId,
      name: 'Riley (new leads)',
      phone: '+15125550142',
      timezone: 'America/Chicago',
      now: new Date(),
    },
    operator,
  );
  await createAgent(
    storage,
    {
      accountId: agencyId,
      name: 'Sam (renewals)',
      phone: '+15125550177',
      timezone: 'America/Chicago',
      windows: ['mon-fri 09:00-17:30', 'sat 10:00-14:00'],
      outsideWindow: 'queue',
      now: new Date(),
    },
    operator,
  );
  await setDefaultAgent(storage, agencyId, riley.id, operator, new Date());
  const agencyKey = (await generateKey(storage, agencyId, operator, { now: new Date() })).key;
  await setWebhook(storage, agencyId, options.receiver.url, { allowPrivate: true, now: new Date() }, operator);

  // Someone invited who has not chosen a password yet (the Users page shows both states).
  await createUser(storage, {
    accountId: agencyId,
    email: 'jordan.kim@northwind-growth.example',
    actor: operator,
    now: new Date(),
  });
  await addToDoNotCall(storage, {
    accountId: agencyId,
    phoneNumber: '+15125550199',
    reason: 'Asked not to be called again',
    actor: operator,
    now: new Date(),
  });
  await addToDoNotCall(storage, { accountId: agencyId, phoneNumber: '+15125550108', actor: operator, now: new Date() });

  const { id: clientId } = await createClient(storage, { agencyId, name: 'Bayside Dental', now: new Date() }, operator);
  const clientEmail = 'frontdesk@bayside-dental.example';
  const clientUser = await createUser(storage, {
    accountId: clientId,
    email: clientEmail,
    actor: operator,
    now: new Date(),
  });
  const clientSet = await setPasswordWithLink(storage, {
    token: clientUser.token,
    password,
    ip: null,
    now: new Date(),
  });
  if (!clientSet.ok) throw new Error(clientSet.problem);
  await addToDoNotCall(storage, {
    accountId: clientId,
    phoneNumber: '+14155550166',
    reason: 'Moved away',
    actor: operator,
    now: new Date(),
  });
  const frontDesk = await createAgent(
    storage,
    {
      accountId: clientId,
      name: 'Bayside front desk',
      phone: '+14155550123',
      timezone: 'America/Los_Angeles',
      now: new Date(),
    },
    operator,
  );
  await setDefaultAgent(storage, clientId, frontDesk.id, operator, new Date());
  const clientKey = (await generateKey(storage, clientId, operator, { now: new Date() })).key;
  await setWebhook(
    storage,
    clientId,
    `${options.receiver.url}?client=bayside`,
    { allowPrivate: true, now: new Date() },
    operator,
  );

  // As a client should: a 503 (the database did not answer in time, on a starved machine) is tried again with the
  // same Idempotency-Key, so a trigger that was accepted after all is not made twice.
  const trigger = async (key: string, body: Record<string, unknown>) => {
    const idempotencyKey = randomUUID();
    for (let attempt = 1; ; attempt++) {
      const res = await httpsRequest(options.port, '/api/v1/calls/trigger', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body: JSON.stringify(body),
      });
      if (res.status === 503 && attempt < 5) {
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
        continue;
      }
      if (res.status !== 200) throw new Error(`trigger answered ${res.status}: ${res.body}`);
      return (JSON.parse(res.body) as { call_id: string }).call_id;
    }
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
  // While Dana is on the line, the agent's runtime reports how it went, as a runtime would (its context token signed
  // with the service's key): the call.completed that follows carries it, and the call's page shows it.
  await until(
    'the first call to be answered',
    async () => ((await storage.history.findCallDetail(callId))?.status === 'in_progress' ? true : null),
    30_000,
  );
  const key = await storage.signingKeys.ensureKey(
    CONTEXT_TOKEN_KEY_PURPOSE,
    randomBytes(32).toString('base64'),
    new Date(),
  );
  const result = await httpsRequest(options.port, `/agent-runtime/v1/calls/${callId}/result`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${signContextToken(Buffer.from(key, 'base64'), { callId, attempt: 1, now: new Date() })}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(showcaseResult(new Date())),
  });
  if (result.status !== 200) throw new Error(`the result answered ${result.status}: ${result.body}`);
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
  const clientCallId = await trigger(clientKey, {
    phone_number: '+14155550188',
    name: 'Tom Becker',
    email: 'tom.becker@example.com',
    metadata: { appointment: 'cleaning', reminder: true },
  });
  callIds.push(clientCallId);
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
        const call = await storage.history.findCallDetail(id);
        if (!call || !['completed', 'failed'].includes(call.status)) return null;
        if (call.deliveries.length < 2 || call.deliveries.some((d) => d.status === 'pending')) return null;
      }
      return true;
    },
    60_000,
  );
  // Left waiting (after the others have ended, so that they are not held up): scheduled for tomorrow.
  const waitingCallId = await trigger(agencyKey, {
    phone_number: '+15125550164',
    name: 'Noah Fischer',
    scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
    metadata: { lead_id: 'LD-20934', source: 'referral' },
  });
  return {
    email,
    password,
    clientEmail,
    agencyId,
    clientId,
    agentId: riley.id,
    clientAgentId: frontDesk.id,
    callId,
    clientCallId,
    callIds,
    waitingCallId,
  };
}

/** Who sees a page: nobody signed in, the agency's user, or the client's user. */
export type Viewer = 'visitor' | 'agency' | 'client';

export interface DashboardPage {
  /** The pictures' name: <name>-1280.png and <name>-390.png. */
  name: string;
  viewer: Viewer;
  path: string;
  /** What the page shows, in the words of docs/dashboard.md. */
  caption: string;
  /** Its HTTP status when not 200 (an error page). */
  status?: number;
}

/**
 * Every page of the dashboard a GET shows, as each kind of viewer sees it (read from src/routes/dashboard/ and
 * src/views/navigation.ts). The pages only a form's answer shows (a new key, an invitation link, a confirmation)
 * are visited by test/browser/every-page.test.ts through their forms.
 */
export function dashboardPages(showcase: Showcase): DashboardPage[] {
  const client = `/dashboard/clients/${showcase.clientId}`;
  return [
    { name: 'sign-in', viewer: 'visitor', path: '/dashboard/sign-in', caption: 'Sign-in' },
    {
      name: 'link-unusable',
      viewer: 'visitor',
      path: `/dashboard/set-password/${'x'.repeat(43)}`,
      caption: 'A one-time link that cannot be used',
      status: 410,
    },
    {
      name: 'not-found',
      viewer: 'visitor',
      path: '/dashboard/no-such-page',
      caption: 'An error page (an unknown address)',
      status: 404,
    },
    { name: 'overview', viewer: 'agency', path: '/dashboard', caption: 'Overview of an agency and its client' },
    { name: 'calls', viewer: 'agency', path: '/dashboard/calls', caption: 'Calls' },
    {
      name: 'call-detail',
      viewer: 'agency',
      path: `/dashboard/calls/${showcase.callId}`,
      caption: "A call's detail view: timeline, metadata as sent, webhook deliveries",
    },
    {
      name: 'call-waiting',
      viewer: 'agency',
      path: `/dashboard/calls/${showcase.waitingCallId}`,
      caption: 'A call still waiting (scheduled), with its Cancel button',
    },
    { name: 'agents', viewer: 'agency', path: '/dashboard/agents', caption: 'Agents' },
    { name: 'agent-new', viewer: 'agency', path: '/dashboard/agents/new', caption: "A new agent's form" },
    { name: 'agent-edit', viewer: 'agency', path: `/dashboard/agents/${showcase.agentId}`, caption: "An agent's page" },
    { name: 'clients', viewer: 'agency', path: '/dashboard/clients', caption: 'Clients' },
    {
      name: 'client',
      viewer: 'agency',
      path: client,
      caption: "A client's page: its settings, users and an invitation form",
    },
    {
      name: 'client-api-webhooks',
      viewer: 'agency',
      path: `${client}/api-webhooks`,
      caption: "A client's API & Webhooks, managed by the agency",
    },
    {
      name: 'client-do-not-call',
      viewer: 'agency',
      path: `${client}/do-not-call`,
      caption: "A client's do-not-call list, managed by the agency",
    },
    { name: 'do-not-call', viewer: 'agency', path: '/dashboard/do-not-call', caption: "The agency's do-not-call list" },
    {
      name: 'api-webhooks',
      viewer: 'agency',
      path: '/dashboard/settings/api-webhooks',
      caption: 'Settings → API & Webhooks',
    },
    {
      name: 'api-webhooks-key',
      viewer: 'agency',
      path: '/dashboard/settings/api-webhooks/key',
      caption: 'Generating a new API key: the confirmation',
    },
    {
      name: 'api-webhooks-webhook',
      viewer: 'agency',
      path: '/dashboard/settings/api-webhooks/webhook',
      caption: 'Changing the webhook URL',
    },
    {
      name: 'delivery-log',
      viewer: 'agency',
      path: '/dashboard/settings/api-webhooks/deliveries',
      caption: 'The webhook delivery log',
    },
    {
      name: 'calling-rules',
      viewer: 'agency',
      path: '/dashboard/calling-rules',
      caption: "Calling rules: the agency's rule sets, caps, consent and hours",
    },
    {
      name: 'carrier',
      viewer: 'agency',
      path: '/dashboard/settings/carrier',
      caption: 'Settings → Carrier: the carrier calls are placed with, and its numbers',
    },
    { name: 'users', viewer: 'agency', path: '/dashboard/users', caption: 'Users' },
    { name: 'audit-log', viewer: 'agency', path: '/dashboard/audit-log', caption: 'Audit log' },
    {
      name: 'account',
      viewer: 'agency',
      path: '/dashboard/account',
      caption: 'Account: change password, sign out everywhere',
    },
    {
      name: 'confirm-password',
      viewer: 'agency',
      path: '/dashboard/confirm-password',
      caption: 'Entering the password again before a secret is shown',
    },
    { name: 'client-user-overview', viewer: 'client', path: '/dashboard', caption: 'Overview of a client' },
    { name: 'client-user-calls', viewer: 'client', path: '/dashboard/calls', caption: 'Calls of a client' },
    {
      name: 'client-user-call-detail',
      viewer: 'client',
      path: `/dashboard/calls/${showcase.clientCallId}`,
      caption: 'A call of a client',
    },
    { name: 'client-user-agents', viewer: 'client', path: '/dashboard/agents', caption: 'Agents of a client' },
    {
      name: 'client-user-agent-edit',
      viewer: 'client',
      path: `/dashboard/agents/${showcase.clientAgentId}`,
      caption: "An agent's page",
    },
    {
      name: 'client-user-api-webhooks',
      viewer: 'client',
      path: '/dashboard/settings/api-webhooks',
      caption: 'Settings → API & Webhooks',
    },
    {
      name: 'client-user-delivery-log',
      viewer: 'client',
      path: '/dashboard/settings/api-webhooks/deliveries',
      caption: 'The webhook delivery log',
    },
    {
      name: 'client-user-do-not-call',
      viewer: 'client',
      path: '/dashboard/do-not-call',
      caption: "The client's do-not-call list",
    },
    { name: 'client-user-users', viewer: 'client', path: '/dashboard/users', caption: 'Users (read only)' },
    { name: 'client-user-audit-log', viewer: 'client', path: '/dashboard/audit-log', caption: 'Audit log' },
    { name: 'client-user-account', viewer: 'client', path: '/dashboard/account', caption: 'Account' },
  ];
}

/** The pages with placeholder ids: their names and captions, known before any showcase exists. */
export function dashboardPagesOutline(): DashboardPage[] {
  const id = (what: string) => `<${what}>`;
  return dashboardPages({
    email: '',
    password: '',
    clientEmail: '',
    agencyId: id('agency'),
    clientId: id('client'),
    agentId: id('agent'),
    clientAgentId: id('client-agent'),
    callId: id('call'),
    clientCallId: id('client-call'),
    callIds: [],
    waitingCallId: id('waiting-call'),
  });
}

/** The two widths every page is checked and pictured at: a laptop and a phone. */
export const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** A new browser context at `width`, signed in as `email` through the sign-in form (or not signed in, without one). */
export async function contextFor(
  browser: Browser,
  options: { baseUrl: string; email?: string; password?: string; width?: number; height?: number },
): Promise<BrowserContext> {
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    baseURL: options.baseUrl,
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    deviceScaleFactor: 1,
    colorScheme: 'light',
  });
  if (options.email) {
    const page = await context.newPage();
    await page.goto('/dashboard/sign-in');
    await page.fill('input[name=email]', options.email);
    await page.fill('input[name=password]', options.password ?? '');
    await Promise.all([page.waitForURL(/\/dashboard$/), page.click('main button[type=submit]')]);
    await page.close();
  }
  return context;
}

/** Opens `page` at `path` and throws unless it is that page with that status (a sign-in page instead, or a 500). */
export async function openPage(page: Page, expected: { path: string; status?: number | undefined }): Promise<void> {
  const response = await page.goto(expected.path);
  const shown = new URL(page.url()).pathname;
  const wanted = expected.path.split('?')[0];
  if (response?.status() !== (expected.status ?? 200) || shown !== wanted)
    throw new Error(`${expected.path} answered ${response?.status()} at ${shown}`);
}
