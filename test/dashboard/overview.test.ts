// The Overview: per account (an agency and each of its clients; a client user their own), calls active now out of the
// concurrency limit, waiting and waiting for a calling window, today's outcomes in UTC (completed, each failure reason;
// yesterday's left out), and each webhook endpoint's health (last success, failed attempts of the last hour, disabled
// with its reason), from real calls and real deliveries.
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import type { CallUpdate } from '../../src/domain/call-lifecycle.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { buildTestApp } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { callIdOf, trigger as triggerWithHeaders } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

// A Monday, noon UTC: a weekend window is closed.
const clock = { now: new Date('2030-03-11T12:00:00.000Z') };
let app: App;
let agency: Tenant;
let client: Tenant;

/** The body rows of the page's table `id`: the row's account name -> its cells as text. */
function table(body: string, id: string): Map<string, string[]> {
  const start = body.indexOf(`id="${id}"`);
  expect(start, `table ${id}`).toBeGreaterThan(0);
  const tbody = body.slice(body.indexOf('<tbody>', start), body.indexOf('</tbody>', start));
  const text = (h: string) =>
    h
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  return new Map(
    tbody
      .split('<tr>')
      .slice(1)
      .map((row) => [
        text(/<th scope="row">([\s\S]*?)<\/th>/.exec(row)![1]!).replace(/ \((agency|client)\)$/, ''),
        [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => text(m[1]!)),
      ]),
  );
}

async function signedIn(email: string, ip: string): Promise<Visitor> {
  const visitor = new Visitor(app);
  visitor.ip = ip;
  expect((await visitor.signIn(email)).status).toBe(303);
  return visitor;
}

/** A call of `tenant` taken through `updates`, at `at` (default: now). */
async function call(
  tenant: Tenant,
  updates: CallUpdate[],
  options: { agentId?: string; at?: Date } = {},
): Promise<string> {
  const now = clock.now;
  // No attempt may be in flight while the clock stands elsewhere: it would record its time (and its retry) there.
  if (options.at) await app.deliveryWorker!.settle();
  clock.now = options.at ?? now;
  try {
    const answer = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      ...(options.agentId ? { agent_id: options.agentId } : {}),
    });
    expect(answer.statusCode).toBe(200);
    const callId = callIdOf(answer);
    for (const update of updates)
      await applyCallUpdate(app.prisma, callId, update, { now: clock.now, source: 'provider' });
    return callId;
  } finally {
    clock.now = now;
  }
}

/** The trigger as a TLS-terminating proxy forwards it (these apps run with TLS_MODE=proxy, as the dashboard's). */
const trigger = (target: App, key: string, body: unknown = { phone_number: '+14155552671' }) =>
  triggerWithHeaders(target, key, body, { 'x-forwarded-proto': 'https' });

beforeAll(async () => {
  ({ app } = await buildTestApp({
    env: {
      ...DASHBOARD_ENV,
      MAX_CONCURRENT_CALLS: '3',
      WEBHOOK_DELIVERY_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    },
    clock: () => clock.now,
    jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
  }));
  agency = await createTenant(app.prisma);
  client = await createClientTenant(app.prisma, agency.accountId);
  await createClient(app.prisma, { agencyId: agency.accountId, name: 'Quiet Client' });
  const receiver = await startReceiver();
  // Started and completed events are taken; failed ones get a 503 (retried later).
  receiver.respond = (request) => ({ status: request.body.includes('"type":"call.failed"') ? 503 : 200 });
  const gone = await startReceiver();
  gone.respond = () => ({ status: 410 });
  await setWebhook(app.prisma, agency.accountId, receiver.url, { allowPrivate: true });
  await setWebhook(app.prisma, client.accountId, gone.url, { allowPrivate: true });
  await createUserWithPassword(app.prisma, agency.accountId, 'agency@overview.example');
  await createUserWithPassword(app.prisma, client.accountId, 'client@overview.example');

  const weekend = await createAgent(app.prisma, {
    accountId: agency.accountId,
    name: 'Weekend',
    phone: '+14155550111',
    windows: ['sat,sun 09:00-17:00'],
  });
  // The agency: 2 active, 2 waiting (one for the weekend window), 1 completed, 2 busy and 1 unanswered today, and a
  // call that expired yesterday.
  await call(agency, [{ kind: 'dialing' }]);
  await call(agency, [{ kind: 'dialing' }, { kind: 'answered' }]);
  await call(agency, [{ kind: 'dialing' }, { kind: 'answered' }, { kind: 'completed', durationSeconds: 12 }]);
  await call(agency, [{ kind: 'dialing' }, { kind: 'failed', reason: 'busy' }]);
  await call(agency, [{ kind: 'failed', reason: 'busy' }]);
  await call(agency, [{ kind: 'dialing' }, { kind: 'failed', reason: 'no_answer' }]);
  await call(agency, []);
  await call(agency, [], { agentId: weekend.id });
  await call(agency, [{ kind: 'failed', reason: 'expired' }], { at: new Date('2030-03-10T23:59:59.000Z') });
  // The client: one call failed with a provider error; its endpoint answers 410 and is switched off.
  await call(client, [{ kind: 'failed', reason: 'provider_error' }]);
  await app.deliveryWorker!.settle();
});

describe('overview', () => {
  it("shows an agency user each account's calls now and today's outcomes", async () => {
    const visitor = await signedIn('agency@overview.example', '203.0.113.21');
    const page = await visitor.get('/dashboard');
    expect(page.status).toBe(200);
    expect(page.body).toContain('"Today" is 2030-03-11 in UTC');
    const calls = table(page.body, 'calls-now');
    expect([...calls.keys()]).toEqual(['Test Agency', 'Quiet Client', 'Test Client']);
    // Active, waiting, of them for a window, completed today, failed today (with each reason).
    expect(calls.get('Test Agency')).toEqual(['2 of 3', '2', '1', '1', '3 busy: 2 no answer: 1']);
    expect(calls.get('Test Client')).toEqual(['0 of 3', '0', '0', '0', '1 provider error: 1']);
    expect(calls.get('Quiet Client')).toEqual(['0 of 3', '0', '0', '0', '0']);
  });

  it("shows each endpoint's last success, failed attempts of the last hour, and why one is disabled", async () => {
    const visitor = await signedIn('agency@overview.example', '203.0.113.22');
    const endpoints = table((await visitor.get('/dashboard')).body, 'endpoints');
    const agencyUrl = (await app.prisma.webhookEndpoint.findUniqueOrThrow({ where: { accountId: agency.accountId } }))
      .url;
    const disabled = await app.prisma.webhookEndpoint.findUniqueOrThrow({ where: { accountId: client.accountId } });
    expect(disabled.enabled).toBe(false);
    // Four call.failed deliveries got a 503 (yesterday's expiry among them: it was sent now).
    expect(endpoints.get('Test Agency')).toEqual([agencyUrl, 'Enabled', '2030-03-11 12:00:00 UTC', '4']);
    // The stored reason holds an ISO time; the page writes it as every page writes times (issue 21, point 11).
    expect(disabled.disabledReason).toMatch(/^answered 410 Gone at \d{4}-\d\d-\d\dT/);
    const shownAt = new Date(/at (\S+)$/.exec(disabled.disabledReason!)![1]!)
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC');
    expect(endpoints.get('Test Client')).toEqual([
      disabled.url,
      `Disabled : answered 410 Gone at ${shownAt}`,
      'never',
      '1',
    ]);
    expect(endpoints.get('Quiet Client')).toEqual(['No webhook endpoint set']);

    // Two hours on: the failures are older than an hour; the last success stays.
    clock.now = new Date('2030-03-11T14:00:00.000Z');
    try {
      const later = await signedIn('agency@overview.example', '203.0.113.23');
      const after = table((await later.get('/dashboard')).body, 'endpoints');
      expect(after.get('Test Agency')).toEqual([agencyUrl, 'Enabled', '2030-03-11 12:00:00 UTC', '0']);
      expect(after.get('Test Client')![3]).toBe('0');
    } finally {
      clock.now = new Date('2030-03-11T12:00:00.000Z');
    }
  });

  it("shows a client user their client's numbers only", async () => {
    const visitor = await signedIn('client@overview.example', '203.0.113.24');
    const page = (await visitor.get('/dashboard')).body;
    const calls = table(page, 'calls-now');
    expect([...calls.keys()]).toEqual(['Test Client']);
    expect(calls.get('Test Client')).toEqual(['0 of 3', '0', '0', '0', '1 provider error: 1']);
    expect([...table(page, 'endpoints').keys()]).toEqual(['Test Client']);
    expect(page).not.toContain('Test Agency<');
  });

  it("shows a client's name with markup, quotes and Unicode as text", async () => {
    await createClient(app.prisma, { agencyId: agency.accountId, name: `<img src=x onerror="alert(1)"> Zoë's` });
    const visitor = await signedIn('agency@overview.example', '203.0.113.25');
    const page = (await visitor.get('/dashboard')).body;
    expect(page).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt; Zoë&#39;s');
    expect(page).not.toContain('<img');
  });
});
