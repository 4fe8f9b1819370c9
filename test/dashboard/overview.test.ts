// The Overview: per account (an agency and each of its clients; a client user their own), calls active now out of the
// concurrency limit, waiting and waiting for a calling window, today's outcomes in UTC (completed, each failure reason;
// yesterday's left out), and each webhook endpoint's health (last success, failed attempts of the last hour, disabled
// with its reason), from real calls and real deliveries; each number a link to the filtered Calls list, a warning for
// a failing or disabled endpoint, the first-run checklist, and the live refresh while a call is under way (issue 24).
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient, generateKey } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import type { CallUpdate } from '../../src/domain/call-lifecycle.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { callIdOf, trigger as triggerWithHeaders } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';
import { forceCall } from '../helpers/seed.js';
import { setCallingRulesEnabled } from '../helpers/seed/held-calls.js';

// A Monday, noon UTC: a weekend window is closed.
const clock = { now: new Date('2058-03-11T12:00:00.000Z') };
let app: App;
let agency: Tenant;
let client: Tenant;
/** The agency's call still dialling, and its call completed today. */
let dialingCall: string;
let completedCall: string;

const text = (h: string) =>
  h
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
const decode = (h: string) => h.replace(/&amp;/g, '&');

/** The body rows of the page's table `id`: the row's account name -> its cells as text. */
function table(body: string, id: string): Map<string, string[]> {
  const start = body.indexOf(`id="${id}"`);
  expect(start, `table ${id}`).toBeGreaterThan(0);
  const tbody = body.slice(body.indexOf('<tbody>', start), body.indexOf('</tbody>', start));
  return new Map(
    tbody
      .split('<tr>')
      .slice(1)
      .map((row) => [
        text(/<th scope="row"[^>]*>([\s\S]*?)<\/th>/.exec(row)![1]!).replace(/ \((agency|client)\)$/, ''),
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
  const at = options.at ?? now;
  // The trigger is accepted by the app's clock. No attempt may be in flight while that clock stands elsewhere: it
  // would record its time (and its retry) there.
  if (options.at) await app.deliveryWorker!.settle();
  clock.now = at;
  let callId: string;
  try {
    const answer = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      ...(options.agentId ? { agent_id: options.agentId } : {}),
    });
    expect(answer.statusCode).toBe(200);
    callId = callIdOf(answer);
  } finally {
    clock.now = now;
  }
  // The updates are given their time; the app's clock is back by then, so that the worker their deliveries wake leases
  // by the present. A lease taken while the clock stood yesterday looks expired once it is back, and under load a
  // second claim sent that delivery again (a fifth failed attempt where the test counts four).
  for (const update of updates) await applyCallUpdate(app.storage, callId, update, { now: at, source: 'provider' });
  return callId;
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
  agency = await createTenant(app.storage);
  client = await createClientTenant(app.storage, agency.accountId);
  await createClient(app.storage, { agencyId: agency.accountId, name: 'Quiet Client', now: app.now() });
  const receiver = await startReceiver();
  // Started and completed events are taken; failed ones get a 503 (retried later).
  receiver.respond = (request) => ({ status: request.body.includes('"type":"call.failed"') ? 503 : 200 });
  const gone = await startReceiver();
  gone.respond = () => ({ status: 410 });
  await setWebhook(app.storage, agency.accountId, receiver.url, { allowPrivate: true, now: app.now() });
  await setWebhook(app.storage, client.accountId, gone.url, { allowPrivate: true, now: app.now() });
  await createUserWithPassword(app.storage, agency.accountId, 'agency@overview.example');
  await createUserWithPassword(app.storage, client.accountId, 'client@overview.example');

  const weekend = await createAgent(app.storage, {
    accountId: agency.accountId,
    name: 'Weekend',
    phone: '+14155550111',
    windows: ['sat,sun 09:00-17:00'],
    now: app.now(),
  });
  // The agency: 2 active, 4 waiting (one for the weekend window, one scheduled, one for a retry), 1 completed, 2 busy and 1 unanswered today, and a
  // call that expired yesterday.
  dialingCall = await call(agency, [{ kind: 'dialing' }]);
  await call(agency, [{ kind: 'dialing' }, { kind: 'answered' }]);
  completedCall = await call(agency, [
    { kind: 'dialing' },
    { kind: 'answered' },
    { kind: 'completed', durationSeconds: 12 },
  ]);
  await call(agency, [{ kind: 'dialing' }, { kind: 'failed', reason: 'busy' }]);
  await call(agency, [{ kind: 'failed', reason: 'busy' }]);
  await call(agency, [{ kind: 'dialing' }, { kind: 'failed', reason: 'no_answer' }]);
  await call(agency, []);
  await call(agency, [], { agentId: weekend.id });
  // One call scheduled for tomorrow, one waiting for its second attempt (as the trigger and a retry leave them).
  const tomorrow = new Date(clock.now.getTime() + 86_400_000);
  await forceCall(prismaOf(app), await call(agency, []), { scheduledAt: tomorrow, notBefore: tomorrow });
  await forceCall(prismaOf(app), await call(agency, []), {
    attempt: 2,
    nextAttemptAt: tomorrow,
    notBefore: tomorrow,
    attemptOutcomes: [{ attempt: 1, outcome: 'busy', at: clock.now.toISOString() }],
  });
  await call(agency, [{ kind: 'failed', reason: 'expired' }], { at: new Date('2058-03-10T23:59:59.000Z') });
  // The client: one call failed with a provider error; its endpoint answers 410 and is switched off.
  await call(client, [{ kind: 'failed', reason: 'provider_error' }]);
  await app.deliveryWorker!.settle();
});

describe('overview', () => {
  it("shows an agency user each account's calls now and today's outcomes", async () => {
    const visitor = await signedIn('agency@overview.example', '203.0.113.21');
    const page = await visitor.get('/dashboard');
    expect(page.status).toBe(200);
    expect(page.body).toContain('"Today" is 2058-03-11 in UTC');
    const calls = table(page.body, 'calls-now');
    expect([...calls.keys()]).toEqual(['Test Agency', 'Quiet Client', 'Test Client']);
    // Active, waiting, of them for a window, scheduled and for a retry, completed today, failed today (each reason).
    expect(calls.get('Test Agency')).toEqual(['2 of 3', '4', '1', '1', '1', '1', '3 busy: 2 no answer: 1']);
    expect(calls.get('Test Client')).toEqual(['0 of 3', '0', '0', '0', '0', '0', '1 provider error: 1']);
    expect(calls.get('Quiet Client')).toEqual(['0 of 3', '0', '0', '0', '0', '0', '0']);
  });

  it("shows each endpoint's last success, failed attempts of the last hour, and why one is disabled", async () => {
    const visitor = await signedIn('agency@overview.example', '203.0.113.22');
    const endpoints = table((await visitor.get('/dashboard')).body, 'endpoints');
    const agencyUrl = (
      await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: agency.accountId } })
    ).url;
    const disabled = await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: client.accountId } });
    expect(disabled.enabled).toBe(false);
    // Four call.failed deliveries got a 503 (yesterday's expiry among them: it was sent now).
    // Enabled, but failing: no green "Enabled".
    expect(endpoints.get('Test Agency')).toEqual([agencyUrl, 'Failing', '2058-03-11 12:00:00 UTC', '4']);
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
    clock.now = new Date('2058-03-11T14:00:00.000Z');
    try {
      const later = await signedIn('agency@overview.example', '203.0.113.23');
      const after = table((await later.get('/dashboard')).body, 'endpoints');
      expect(after.get('Test Agency')).toEqual([agencyUrl, 'Enabled', '2058-03-11 12:00:00 UTC', '0']);
      expect(after.get('Test Client')![3]).toBe('0');
    } finally {
      clock.now = new Date('2058-03-11T12:00:00.000Z');
    }
  });

  it("shows a client user their client's numbers only", async () => {
    const visitor = await signedIn('client@overview.example', '203.0.113.24');
    const page = (await visitor.get('/dashboard')).body;
    const calls = table(page, 'calls-now');
    expect([...calls.keys()]).toEqual(['Test Client']);
    expect(calls.get('Test Client')).toEqual(['0 of 3', '0', '0', '0', '0', '0', '1 provider error: 1']);
    expect([...table(page, 'endpoints').keys()]).toEqual(['Test Client']);
    expect(page).not.toContain('Test Agency<');
  });

  it("shows a client's name with markup, quotes and Unicode as text", async () => {
    await createClient(app.storage, {
      agencyId: agency.accountId,
      name: `<img src=x onerror="alert(1)"> Zoë's`,
      now: app.now(),
    });
    const visitor = await signedIn('agency@overview.example', '203.0.113.25');
    const page = (await visitor.get('/dashboard')).body;
    expect(page).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt; Zoë&#39;s');
    expect(page).not.toContain('<img');
  });
});

/** The `<tr>` of table `id` whose row header is `name`. */
function rowOf(body: string, id: string, name: string): string {
  const start = body.indexOf(`id="${id}"`);
  const tbody = body.slice(body.indexOf('<tbody>', start), body.indexOf('</tbody>', start));
  const row = tbody
    .split('<tr>')
    .find((r) => text(/<th scope="row"[^>]*>([\s\S]*?)<\/th>/.exec(r)?.[1] ?? '') === name);
  expect(row, `${name} in ${id}`).toBeDefined();
  return row!;
}

const hrefs = (html: string) => [...html.matchAll(/href="([^"]+)"/g)].map((m) => decode(m[1]!));

/** The notices of the page: [text, links] of each. */
function warnings(body: string, role = ' role="alert"'): [string, string[]][] {
  return [...body.matchAll(new RegExp(`<p class="notice error"${role}>([\\s\\S]*?)</p>`, 'g'))].map((m) => [
    text(m[1]!),
    hrefs(m[1]!),
  ]);
}

describe('overview: links, warnings, first steps, live refresh', () => {
  it('links every number to the Calls list filtered to those calls', async () => {
    const visitor = await signedIn('agency@overview.example', '203.0.113.31');
    const page = (await visitor.get('/dashboard')).body;
    const a = agency.accountId;
    const active = `/dashboard/calls?status=in_progress&client=${a}`;
    const waiting = `/dashboard/calls?status=initiated&client=${a}`;
    const completed = `/dashboard/calls?status=completed&from=2058-03-11&to=2058-03-11&client=${a}`;
    const failed = `/dashboard/calls?status=failed&from=2058-03-11&to=2058-03-11&client=${a}`;
    // Active, waiting (and each kind of waiting), completed, failed (and each reason: busy, no answer).
    expect(hrefs(rowOf(page, 'calls-now', 'Test Agency (agency)'))).toEqual([
      active,
      waiting,
      waiting,
      waiting,
      waiting,
      completed,
      failed,
      failed,
      failed,
    ]);
    // The failed attempts of an endpoint link to its failed deliveries.
    expect(hrefs(rowOf(page, 'endpoints', 'Test Agency'))).toEqual([
      '/dashboard/settings/api-webhooks/deliveries?failed=1',
    ]);
    expect(hrefs(rowOf(page, 'endpoints', 'Test Client'))).toEqual([
      `/dashboard/clients/${client.accountId}/api-webhooks/deliveries?failed=1`,
    ]);

    // Each link lists its calls: today's completed call, not the one still dialling; the waiting ones.
    const done = await visitor.get(completed);
    expect(done.status).toBe(200);
    expect(done.body).toContain(`href="/dashboard/calls/${completedCall}"`);
    expect(done.body).not.toContain(`href="/dashboard/calls/${dialingCall}"`);
    const inLine = await visitor.get(waiting);
    expect(inLine.status).toBe(200);
    expect(inLine.body.match(/href="\/dashboard\/calls\/[0-9a-f-]{36}"/g)).toHaveLength(4);

    // A client user's links need no client filter: the list shows their account only.
    const clientUser = await signedIn('client@overview.example', '203.0.113.32');
    const own = (await clientUser.get('/dashboard')).body;
    expect(hrefs(rowOf(own, 'calls-now', 'Test Client'))).toEqual([
      '/dashboard/calls?status=in_progress',
      ...Array<string>(4).fill('/dashboard/calls?status=initiated'),
      '/dashboard/calls?status=completed&from=2058-03-11&to=2058-03-11',
      // Failed today, and its one reason.
      ...Array<string>(2).fill('/dashboard/calls?status=failed&from=2058-03-11&to=2058-03-11'),
    ]);
  });

  it('warns of a failing or disabled endpoint with a link to its delivery log, announced once', async () => {
    const visitor = await signedIn('agency@overview.example', '203.0.113.33');
    const page = (await visitor.get('/dashboard')).body;
    const disabled = await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: client.accountId } });
    const shownAt = new Date(/at (\S+)$/.exec(disabled.disabledReason!)![1]!)
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC');
    const clientBase = `/dashboard/clients/${client.accountId}/api-webhooks`;
    expect(warnings(page)).toEqual([
      [
        'The webhook endpoint of Test Agency failed 4 delivery attempts in the last hour (last success: ' +
          '2058-03-11 12:00:00 UTC). See its failed deliveries',
        ['/dashboard/settings/api-webhooks/deliveries?failed=1'],
      ],
      [
        `The webhook endpoint of Test Client is disabled (answered 410 Gone at ${shownAt}): its events are held, ` +
          'not sent, until it is enabled again. Enable it · See its failed deliveries',
        [`${clientBase}#webhook-heading`, `${clientBase}/deliveries?failed=1`],
      ],
    ]);
    // The links lead to the delivery log and the settings.
    for (const href of [`${clientBase}/deliveries?failed=1`, '/dashboard/settings/api-webhooks/deliveries?failed=1'])
      expect((await visitor.get(href)).status).toBe(200);

    // A live refresh shows them again without the alert role (a screen reader would read them every few seconds).
    const refresh = await visitor.request('GET', '/dashboard', undefined, { 'hx-request': 'true' });
    expect(warnings(refresh.body)).toEqual([]);
    expect(warnings(refresh.body, '').map(([words]) => words)).toEqual(warnings(page).map(([words]) => words));

    // A client user is warned of their own endpoint, linked to their own settings.
    const clientUser = await signedIn('client@overview.example', '203.0.113.34');
    expect(warnings((await clientUser.get('/dashboard')).body).map(([, links]) => links)).toEqual([
      ['/dashboard/settings/api-webhooks#webhook-heading', '/dashboard/settings/api-webhooks/deliveries?failed=1'],
    ]);

    // Two hours on, the agency's failures are older than an hour: no warning; the disabled endpoint still has one.
    clock.now = new Date('2058-03-11T14:00:00.000Z');
    try {
      const later = await signedIn('agency@overview.example', '203.0.113.35');
      const after = (await later.get('/dashboard')).body;
      expect(warnings(after).map(([words]) => words.slice(0, 40))).toEqual([
        'The webhook endpoint of Test Client is d',
      ]);
      expect(table(after, 'endpoints').get('Test Agency')![1]).toBe('Enabled');
      expect(rowOf(after, 'endpoints', 'Test Agency')).toContain('<span class="badge" data-tone="ok">Enabled</span>');
    } finally {
      clock.now = new Date('2058-03-11T12:00:00.000Z');
    }
  });

  it('lists the five steps to a first call and the calling rules, ticks each one taken, and goes once all are', async () => {
    const { id: accountId } = await createAgency(app.storage, { name: 'Fresh Agency' });
    await createUserWithPassword(app.storage, accountId, 'new@overview.example');
    const visitor = await signedIn('new@overview.example', '203.0.113.36');
    /** Each step: its text, and where its link goes (none once done). */
    const steps = async () => {
      const body = (await visitor.get('/dashboard')).body;
      const list = /<ol class="checklist" id="checklist">([\s\S]*?)<\/ol>/.exec(body)?.[1];
      if (!list) return null;
      return [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => [
        text(m[1]!).replace(/ :/g, ':'),
        hrefs(m[1]!)[0] ?? null,
      ]);
    };
    const settings = '/dashboard/settings/api-webhooks';
    const todo = [
      [
        'To do An agent with a phone number: the number its calls come from (caller ID), and the hours it may call',
        '/dashboard/agents/new',
      ],
      ['To do A default agent: the agent a trigger without an agent_id uses', `${settings}#agent-heading`],
      ['To do An API key: your system sends it with each trigger; it is shown once', `${settings}#key-heading`],
      [
        'To do A webhook endpoint: where call.started, call.completed and call.failed are sent',
        `${settings}#webhook-heading`,
      ],
      [
        'To do A first call: POST /api/v1/calls/trigger with your key, a phone_number and an agent_id (the Agents ' +
          'page shows them)',
        '/dashboard/agents',
      ],
      [
        'Recommended Calling rules switched on: hours where the callee is, caps per number, consent on record ' +
          '(recommended; off until you switch them on)',
        '/dashboard/calling-rules',
      ],
    ];
    const done = ['Done An agent with a phone number', 'Done A default agent', 'Done An API key'];
    expect(await steps()).toEqual(todo);
    expect((await visitor.get('/dashboard')).body).toContain(
      '0 of 5 steps to a first call done, and a step we recommend to every agency.',
    );
    // The Calling rules page is built beside this one: every other link is checked.
    for (const [, href] of todo.slice(0, 5)) expect((await visitor.get(href!.split('#')[0]!)).status).toBe(200);

    // An agent without a number is not the step.
    const silent = await createAgent(app.storage, { accountId, name: 'No number', now: app.now() });
    expect((await steps())![0]).toEqual(todo[0]);
    const agent = await createAgent(app.storage, {
      accountId,
      name: 'Front desk',
      phone: '+14155550199',
      now: app.now(),
    });
    expect(await steps()).toEqual([[done[0], null], ...todo.slice(1)]);
    await setDefaultAgent(app.storage, accountId, silent.id, undefined, app.now());
    await setDefaultAgent(app.storage, accountId, agent.id, undefined, app.now());
    expect(await steps()).toEqual([[done[0], null], [done[1], null], ...todo.slice(2)]);
    const { key } = await generateKey(app.storage, accountId, undefined, { now: app.now() });
    expect(await steps()).toEqual([[done[0], null], [done[1], null], [done[2], null], ...todo.slice(3)]);
    await setWebhook(app.storage, accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: app.now() });
    const four = await steps();
    expect(four!.slice(3)).toEqual([['Done A webhook endpoint', null], todo[4], todo[5]]);
    expect((await visitor.get('/dashboard')).body).toContain('4 of 5 steps to a first call done, and a step we');

    expect((await trigger(app, key)).statusCode).toBe(200);
    // Every step to a first call taken; the agency's calling rules are still off.
    expect((await steps())!.slice(4)).toEqual([['Done A first call', null], todo[5]]);
    await setCallingRulesEnabled(prismaOf(app), accountId, true);
    expect(await steps()).toBeNull();
    expect((await visitor.get('/dashboard')).body).not.toContain('Get started');
  });

  it('refreshes a page by itself only while it shows a call initiated, dialling or in progress, or just completed', async () => {
    const region = (path: string) =>
      `<div id="live" hx-get="${path.replace(/&/g, '&amp;')}" hx-trigger="every 5s" hx-select="#live" ` +
      'hx-target="this" hx-swap="outerHTML ignoreTitle:true">';
    const still = '<div id="live">';
    const scripts = [
      '<script src="/dashboard/assets/htmx.min.js" defer></script>',
      '<script src="/dashboard/assets/live.js" defer></script>',
    ];
    const agencyUser = await signedIn('agency@overview.example', '203.0.113.37');
    const clientUser = await signedIn('client@overview.example', '203.0.113.38');
    const body = async (visitor: Visitor, path: string) => {
      const answer = await visitor.get(path);
      expect(answer.status, path).toBe(200);
      return answer.body;
    };

    // The Overview: the agency has calls dialling and waiting; the client's one call has failed.
    const overview = await body(agencyUser, '/dashboard');
    expect(overview).toContain(region('/dashboard'));
    for (const script of scripts) expect(overview).toContain(script);
    // htmx is told not to eval, run scripts or add inline styles (the CSP forbids them), nor keep pages in storage.
    expect(overview).toContain(
      `<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,` +
        `"historyEnabled":false,"historyCacheSize":0,"selfRequestsOnly":true}'>`,
    );
    const quiet = await body(clientUser, '/dashboard');
    expect(quiet).toContain(still);
    expect(quiet).not.toContain('hx-trigger');

    // The Calls list, as filtered: the page asks for itself again (filters kept) while it lists a call under way.
    const waiting = `/dashboard/calls?status=initiated&client=${agency.accountId}`;
    expect(await body(agencyUser, waiting)).toContain(region(waiting));
    expect(await body(agencyUser, '/dashboard/calls?status=in_progress')).toContain(
      region('/dashboard/calls?status=in_progress'),
    );
    for (const path of ['/dashboard/calls?status=completed', '/dashboard/calls?status=failed']) {
      const page = await body(agencyUser, path);
      expect(page).toContain(still);
      expect(page).not.toContain('hx-trigger');
    }
    expect(await body(clientUser, '/dashboard/calls')).not.toContain('hx-trigger');

    // A call's detail view: while it dials, not once it has ended.
    expect(await body(agencyUser, `/dashboard/calls/${dialingCall}`)).toContain(
      region(`/dashboard/calls/${dialingCall}`),
    );
    // Completed a minute ago without the runtime's result: still refreshing, for the result may come. Three minutes
    // after: quiet.
    await forceCall(prismaOf(app), completedCall, { endedAt: new Date(clock.now.getTime() - 60_000) });
    expect(await body(agencyUser, `/dashboard/calls/${completedCall}`)).toContain(
      region(`/dashboard/calls/${completedCall}`),
    );
    await forceCall(prismaOf(app), completedCall, { endedAt: new Date(clock.now.getTime() - 3 * 60_000) });
    const ended = await body(agencyUser, `/dashboard/calls/${completedCall}`);
    expect(ended).toContain(still);
    expect(ended).not.toContain('hx-trigger');

    // Other pages have no region and load no script for it.
    for (const path of ['/dashboard/agents', '/dashboard/settings/api-webhooks']) {
      const page = await body(agencyUser, path);
      expect(page).not.toContain('id="live"');
      for (const script of scripts) expect(page).not.toContain(script);
    }

    // The scripts are served from here (script-src 'self'): htmx as package.json pins it, and ours.
    const htmx = await agencyUser.get('/dashboard/assets/htmx.min.js');
    expect(htmx.status).toBe(200);
    expect(htmx.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(htmx.body).toContain('version:"2.0.11"');
    const live = await agencyUser.get('/dashboard/assets/live.js');
    expect(live.status).toBe(200);
    expect(live.body).toContain("addEventListener('htmx:beforeRequest'");
  });
});

describe('overview: a live refresh and the session', () => {
  it('does not keep a session alive: the idle timeout counts from the last page the user asked for', async () => {
    const noon = clock.now;
    const at = (minutes: number) => new Date(noon.getTime() + minutes * 60_000);
    try {
      const refreshed = await signedIn('agency@overview.example', '203.0.113.41');
      const browsed = await signedIn('agency@overview.example', '203.0.113.42');
      // 20 minutes on, one page refreshes itself (as htmx asks), the other is asked for by its user.
      clock.now = at(20);
      const refresh = await refreshed.request('GET', '/dashboard', undefined, { 'hx-request': 'true' });
      expect(refresh.status).toBe(200);
      expect(refresh.body).toContain('<div id="live" hx-get="/dashboard"');
      expect((await browsed.get('/dashboard')).status).toBe(200);
      // 40 minutes after sign-in: the refreshed one was idle for 40 (past the 30 allowed), the other for 20.
      clock.now = at(40);
      const lapsed = await refreshed.get('/dashboard');
      expect(lapsed.status).toBe(303);
      expect(lapsed.location).toMatch(/^\/dashboard\/sign-in/);
      expect((await browsed.get('/dashboard')).status).toBe(200);
    } finally {
      clock.now = noon;
    }
  });
});
