// The delivery log at Svix's level (issue 24.3), through the real app, worker and database: each delivery opens
// (a <details>, no script) to its payload and every attempt's answer, escaped; filters by event type, status and date
// with each wrong one named next to its field; status badges; Resend only where it can act, each named for its
// delivery, and none under the banner that says resend is impossible; "Resend failed since" 24 hours ago by default.
// Each row names its call (number and id, a link the viewer can open), read for the whole page at once.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import type { DeliveryStatus } from '../../schemas/vocabulary.js';
import { buildTestApp, prismaOf, poolsOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';
import { forceDelivery, forceEndpoint, insertDeliveryRow } from '../helpers/seed.js';

const LOG = '/dashboard/settings/api-webhooks/deliveries';
let app: App;
let receiver: Receiver;

/** The text of an escaped page fragment, as a browser shows it. */
const text = (fragment: string) =>
  fragment
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
/** The deliveries a log page shows, in order (their webhook-ids). */
const shown = (body: string) =>
  [...body.matchAll(/<article class="delivery" id="delivery-([0-9a-f-]{36})">/g)].map((m) => m[1]);
/** One delivery's part of the page. */
const part = (body: string, id: string) => {
  const start = body.indexOf(`id="delivery-${id}"`);
  expect(start).toBeGreaterThan(-1);
  return body.slice(start, body.indexOf('</article>', start));
};

interface Account {
  tenant: Tenant;
  visitor: Visitor;
  endpointId: string;
}

/** An agency with a webhook to the receiver and a signed-in user. */
async function account(email: string): Promise<Account> {
  const tenant = await createTenant(app.storage);
  await setWebhook(app.storage, tenant.accountId, receiver.url, { allowPrivate: true, now: app.now() });
  await createUserWithPassword(app.storage, tenant.accountId, email);
  const visitor = new Visitor(app);
  visitor.ip = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
  expect((await visitor.signIn(email)).status).toBe(303);
  const endpoint = await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: tenant.accountId } });
  return { tenant, visitor, endpointId: endpoint.id };
}

/** A call that fails at once (canceled): its call.failed is sent to the receiver. */
async function failedCall(a: Account, body: unknown = { phone_number: '+14155552671' }): Promise<string> {
  const callId = callIdOf(await trigger(app, a.tenant.key, body, { 'x-forwarded-proto': 'https' }));
  await applyCallUpdate(
    app.storage,
    callId,
    { kind: 'failed', reason: 'canceled' },
    { now: app.now(), source: 'operator' },
  );
  return callId;
}

/** Deliveries written as given (event, status, age in days), for one of the account's calls. */
async function deliveries(a: Account, rows: { event: string; status: DeliveryStatus; daysAgo: number }[]) {
  const call = await prismaOf(app).call.findFirstOrThrow({ where: { accountId: a.tenant.accountId } });
  const event = await prismaOf(app).callEvent.findFirstOrThrow({ where: { callId: call.id } });
  const ids: string[] = [];
  for (const row of rows) {
    const created = await insertDeliveryRow(prismaOf(app), {
      endpointId: a.endpointId,
      callId: call.id,
      callEventId: event.id,
      eventType: row.event,
      payload: JSON.stringify({ type: row.event, data: { id: call.id } }),
      status: row.status,
      createdAt: new Date(Date.now() - row.daysAgo * 86_400_000),
      nextAttemptAt: new Date(Date.now() + 3_600_000),
      ...(row.status === 'held' ? { heldReason: 'endpoint disabled (switched off)' } : {}),
    });
    ids.push(created.id);
  }
  return ids;
}

beforeAll(async () => {
  ({ app } = await buildTestApp({
    pools: true,
    env: { ...DASHBOARD_ENV, WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
  }));
  receiver = await startReceiver();
});

describe('a delivery opened', () => {
  it('shows its payload pretty-printed as sent, and every attempt: status, latency and the body, escaped', async () => {
    const a = await account('payload@log.example');
    const hostile = '<script>alert("answer")</script> & not ok';
    let answered = 0;
    receiver.respond = () => (answered++ === 0 ? { status: 500, body: hostile } : { status: 200, body: '' });
    // Key order as given (z before a) and markup in the metadata.
    const callId = await failedCall(a, { phone_number: '+14155552671', metadata: { z: 1, a: '<b>bold</b>' } });
    await app.deliveryWorker!.settle();
    const delivery = await prismaOf(app).webhookDelivery.findFirstOrThrow({ where: { callId } });
    // Its first attempt failed; send it again now (as its retry would) and it is delivered.
    await forceDelivery(prismaOf(app), delivery.id, { nextAttemptAt: new Date() });
    await app.deliveryWorker!.settle();

    const page = await a.visitor.get(LOG);
    expect(page.status).toBe(200);
    const mine = part(page.body, delivery.id);
    // A disclosure: it opens without script; its summary says the status (a badge), the event, and the last answer.
    expect(mine).toMatch(
      /<details>\s*<summary><span class="badge" data-tone="ok">Delivered<\/span> <strong class="event">call\.failed<\/strong>/,
    );
    expect(mine).toMatch(/2 attempts, last HTTP 200 in \d+ ms/);
    const payload = /<pre class="json payload"><code>([\s\S]*?)<\/code><\/pre>/.exec(mine)![1]!;
    const sent = receiver.received.at(-1)!.body;
    expect(JSON.parse(text(payload))).toEqual(JSON.parse(sent));
    expect(text(payload)).toContain('\n  "type": "call.failed"');
    expect(text(payload).indexOf('"z": 1')).toBeLessThan(text(payload).indexOf('"a": "<b>bold</b>"'));
    expect(payload).toContain(html('"a": "<b>bold</b>"'));
    expect(page.body).not.toContain('<b>bold</b>');
    // Each attempt: status, latency, the body as text (its markup escaped, never run).
    expect(mine).toMatch(/<td data-label="Response">HTTP 500<\/td>\s*<td data-label="Latency">\d+ ms<\/td>/);
    expect(mine).toMatch(/<td data-label="Response">HTTP 200<\/td>\s*<td data-label="Latency">\d+ ms<\/td>/);
    expect(mine).toContain(`<pre class="json response-body"><code>${html(hostile)}</code></pre>`);
    expect(page.body).not.toContain('<script>alert');
    expect(mine).toContain('<span class="hint">empty</span>');
    expect(mine).toContain(`<a href="/dashboard/calls/${callId}">`);
  });

  it('says when the body went on past the 2 KB it shows', async () => {
    const a = await account('long@log.example');
    receiver.respond = () => ({ status: 200, body: `${'x'.repeat(3000)}` });
    const callId = await failedCall(a);
    await app.deliveryWorker!.settle();
    const delivery = await prismaOf(app).webhookDelivery.findFirstOrThrow({ where: { callId } });
    const mine = part((await a.visitor.get(LOG)).body, delivery.id);
    expect(mine).toContain(`<code>${'x'.repeat(2048)}</code>`);
    expect(mine).not.toContain('x'.repeat(2049));
    expect(mine).toContain('The body went on: the first 2 KB are shown.');
  });
});

describe('the filters', () => {
  let a: Account;
  let ids: string[];

  beforeAll(async () => {
    a = await account('filters@log.example');
    receiver.respond = () => ({ status: 200 });
    await failedCall(a);
    await app.deliveryWorker!.settle();
    // Their own deliveries, apart from the real one: [started delivered 3 days ago, completed failed today,
    // failed pending today, started failed 1 day ago].
    ids = await deliveries(a, [
      { event: 'call.started', status: 'succeeded', daysAgo: 3 },
      { event: 'call.completed', status: 'failed', daysAgo: 0 },
      { event: 'call.failed', status: 'pending', daysAgo: 0 },
      { event: 'call.started', status: 'failed', daysAgo: 1 },
    ]);
  });

  it('are a GET form in a collapsible panel, closed until a filter is set', async () => {
    const page = (await a.visitor.get(LOG)).body;
    expect(page).toContain('<details class="filters-panel">');
    expect(page).toMatch(/<form method="get" action="[^"]*\/deliveries" class="filters"/);
    expect(shown(page)).toHaveLength(5);
    const filtered = (await a.visitor.get(`${LOG}?event=call.started`)).body;
    expect(filtered).toContain('<details class="filters-panel" open>');
    expect(filtered).toContain('<option value="call.started" selected>call.started</option>');
    expect(filtered).toContain('Clear filters');
  });

  it('by event type, status and date range, together', async () => {
    const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    const of = async (query: string) => shown((await a.visitor.get(`${LOG}?${query}`)).body);
    expect(await of('event=call.started')).toEqual([ids[3], ids[0]]);
    expect(await of('status=failed')).toEqual([ids[1], ids[3]]);
    expect(await of('status=pending')).toEqual([ids[2]]);
    expect(await of('event=call.started&status=failed')).toEqual([ids[3]]);
    expect(await of(`to=${day(2)}`)).toEqual([ids[0]]);
    expect(await of(`from=${day(1)}&to=${day(1)}`)).toEqual([ids[3]]);
    expect(await of(`from=${day(1)}&event=call.started`)).toEqual([ids[3]]);
    // Older links (failed=1) are the status filter.
    expect(await of('failed=1')).toEqual([ids[1], ids[3]]);
    // Empty fields (the form's "Any") filter nothing.
    expect(await of('event=&status=&from=&to=')).toHaveLength(5);
    const none = (await a.visitor.get(`${LOG}?status=held`)).body;
    expect(none).toContain('No deliveries match these filters.');
  });

  it('name each wrong filter next to its field, all at once', async () => {
    const res = await a.visitor.get(`${LOG}?event=call.exploded&status=lost&from=2054-02-30&to=yesterday`);
    expect(res.status).toBe(400);
    for (const field of ['event', 'status', 'from', 'to'])
      expect(res.body).toMatch(
        new RegExp(
          `id="f-${field}"[^>]* aria-describedby="f-${field}-error" aria-invalid="true"[\\s\\S]*?<p class="field-error" id="f-${field}-error">`,
        ),
      );
    expect(res.body).toContain(html('"call.exploded" is not an event type'));
    expect(res.body).toContain(html('"2054-02-30" is not a date'));
    expect(res.body).toContain('No deliveries are shown until the filters are corrected.');
    expect(shown(res.body)).toEqual([]);
    const backwards = await a.visitor.get(`${LOG}?from=2054-11-20&to=2054-11-10`);
    expect(backwards.status).toBe(400);
    expect(backwards.body).toContain('The date range ends before it starts');
  });

  it('are kept by the Older link and by a resend', async () => {
    const failedOnly = (await a.visitor.get(`${LOG}?status=failed`)).body;
    const form = new RegExp(`<form method="post" action="[^"]*/deliveries/${ids[1]}/resend">([\\s\\S]*?)</form>`).exec(
      failedOnly,
    )![1]!;
    expect(form).toContain('<input type="hidden" name="status" value="failed">');
    const res = await a.visitor.submit(`${LOG}?status=failed`, `${LOG}/${ids[1]}/resend`, { status: 'failed' });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${LOG}?status=failed`);
  });
});

describe('Resend', () => {
  it('only on a delivered or failed delivery of an enabled endpoint, each button named for its delivery', async () => {
    const a = await account('resend@log.example');
    receiver.respond = () => ({ status: 200 });
    await failedCall(a);
    await app.deliveryWorker!.settle();
    const [delivered, failed, pending, held] = await deliveries(a, [
      { event: 'call.started', status: 'succeeded', daysAgo: 0 },
      { event: 'call.completed', status: 'failed', daysAgo: 0 },
      { event: 'call.completed', status: 'pending', daysAgo: 0 },
      { event: 'call.completed', status: 'held', daysAgo: 0 },
    ]);
    const page = (await a.visitor.get(LOG)).body;
    const labels = [
      ...page.matchAll(/<button type="submit" class="button secondary" aria-label="([^"]+)">Resend<\/button>/g),
    ].map((m) => m[1]!);
    // The real call.failed, and the delivered and failed ones written here: each named, no two alike.
    expect(labels).toHaveLength(3);
    expect(new Set(labels).size).toBe(3);
    for (const label of labels)
      expect(label).toMatch(
        /^Resend call\.(started|completed|failed) of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, call to \+14155552671 …[0-9a-f]{8}$/,
      );
    for (const id of [delivered!, failed!]) expect(part(page, id)).toContain(`/deliveries/${id}/resend"`);
    for (const id of [pending!, held!]) expect(part(page, id)).not.toContain('/resend"');
    expect(part(page, pending!)).toContain('<span class="badge" data-tone="wait">Pending</span>');
    expect(part(page, held!)).toContain('<span class="badge" data-tone="muted">Held</span>');
    expect(part(page, failed!)).toContain('<span class="badge" data-tone="bad">Failed</span>');
    expect(page).toContain('action="/dashboard/settings/api-webhooks/deliveries/resend-failed"');

    // Disabled: the banner says resend is impossible, and nothing on the page offers one.
    await forceEndpoint(
      prismaOf(app),
      { id: a.endpointId },
      { enabled: false, disabledReason: 'answered 410 Gone at 2054-11-25T10:00:00.000Z' },
    );
    const disabled = (await a.visitor.get(LOG)).body;
    expect(disabled).toContain('Deliveries cannot be resent while the endpoint is disabled');
    expect(disabled).toContain(
      '<span class="badge" data-tone="bad">Disabled</span> answered 410 Gone at 2054-11-25 10:00:00 UTC',
    );
    expect(disabled).not.toContain('/resend"');
    expect(disabled).not.toContain('resend-failed');
    expect(disabled).not.toMatch(/>Resend</);
    // A resend sent anyway is refused with the reason (the page again, still without buttons).
    const refused = await a.visitor.request('POST', `${LOG}/${failed!}/resend`, { _csrf: a.visitor.lastCsrf! });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('The webhook endpoint is disabled');
    expect(refused.body).not.toMatch(/>Resend</);
  });

  it('"Resend failed since" is filled in with the time 24 hours ago (UTC)', async () => {
    const a = await account('since@log.example');
    const before = new Date(Date.now() - 86_400_000).toISOString().slice(0, 16);
    const page = (await a.visitor.get(LOG)).body;
    const after = new Date(Date.now() - 86_400_000).toISOString().slice(0, 16);
    const value = /<input id="resend-since" type="datetime-local" name="since" value="([^"]*)" required>/.exec(
      page,
    )?.[1];
    expect([before, after]).toContain(value);
    // A wrong time is named next to the field, and kept there to correct.
    const bad = await a.visitor.submit(LOG, `${LOG}/resend-failed`, { since: '2054-02-30 10:00' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(
      /value="2054-02-30 10:00" required aria-describedby="resend-since-error" aria-invalid="true">[\s\S]*<p class="field-error" id="resend-since-error">Enter the date and time as YYYY-MM-DD HH:MM \(UTC\)\.<\/p>/,
    );
  });
});

describe('each row names its call', () => {
  afterEach(() => vi.restoreAllMocks());

  /** The delivery log's row of a call: its number and id, a link to the call's page. */
  const callLine = (callId: string, number: string) =>
    `<p class="delivery-call"><a href="/dashboard/calls/${callId}">Call to ${number}</a> <code>${callId}</code></p>`;
  const deliveryOf = async (callId: string) =>
    (await prismaOf(app).webhookDelivery.findFirstOrThrow({ where: { callId } })).id;

  /** The statements a GET of the page makes (the request pool: Prisma's and the hand-written ones). */
  async function statementsOf(visitor: Visitor, path: string): Promise<{ count: number; body: string }> {
    const pool = poolsOf(app).requests;
    const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    let count = 0;
    const spy = vi.spyOn(pool, 'query').mockImplementation((...args: unknown[]) => {
      count++;
      return original(...args);
    });
    const res = await visitor.get(path);
    spy.mockRestore();
    expect(res.status).toBe(200);
    return { count, body: res.body };
  }

  it('by number and id, linking to a call page the viewer can open', async () => {
    const a = await account('calls@log.example');
    receiver.respond = () => ({ status: 200 });
    const calls = [
      [await failedCall(a, { phone_number: '+14155550101' }), '+14155550101'],
      [await failedCall(a, { phone_number: '+14155550102' }), '+14155550102'],
    ] as const;
    await app.deliveryWorker!.settle();
    const page = (await a.visitor.get(LOG)).body;
    for (const [callId, number] of calls) {
      expect(part(page, await deliveryOf(callId))).toContain(callLine(callId, number));
      expect((await a.visitor.get(`/dashboard/calls/${callId}`)).status).toBe(200);
    }
  });

  it("a client's log, as its agency and as its own user sees it, names the client's calls", async () => {
    const a = await account('agency-calls@log.example');
    const client = await createClientTenant(app.storage, a.tenant.accountId);
    await setWebhook(app.storage, client.accountId, receiver.url, { now: app.now(), allowPrivate: true });
    await createUserWithPassword(app.storage, client.accountId, 'client-calls@log.example');
    const clientUser = new Visitor(app);
    clientUser.ip = '198.51.100.230';
    expect((await clientUser.signIn('client-calls@log.example')).status).toBe(303);
    const callId = await failedCall({ ...a, tenant: client }, { phone_number: '+14155550103' });
    await app.deliveryWorker!.settle();
    const id = await deliveryOf(callId);
    for (const [visitor, log] of [
      [a.visitor, `/dashboard/clients/${client.accountId}/api-webhooks/deliveries`],
      [clientUser, LOG],
    ] as const) {
      expect(part((await visitor.get(log)).body, id)).toContain(callLine(callId, '+14155550103'));
      expect((await visitor.get(`/dashboard/calls/${callId}`)).status).toBe(200);
    }
    // The agency's own log has no delivery of its client's endpoint.
    expect(shown((await a.visitor.get(LOG)).body)).not.toContain(id);
  });

  it('reads the calls of a page at once: as many statements for twenty rows as for one', async () => {
    const one = await account('one-call@log.example');
    const many = await account('many-calls@log.example');
    receiver.respond = () => ({ status: 200 });
    await failedCall(one, { phone_number: '+14155550200' });
    const numbers = Array.from({ length: 20 }, (_, i) => `+141555502${String(i + 10)}`);
    for (const phone_number of numbers) await failedCall(many, { phone_number });
    await app.deliveryWorker!.settle();
    // Once each first: whatever a first visit reads once (and caches) is not counted.
    await one.visitor.get(LOG);
    await many.visitor.get(LOG);
    const few = await statementsOf(one.visitor, LOG);
    const lots = await statementsOf(many.visitor, LOG);
    expect(shown(few.body)).toHaveLength(1);
    expect(shown(lots.body)).toHaveLength(20);
    for (const number of numbers) expect(lots.body).toContain(`>Call to ${number}</a>`);
    expect(few.count).toBeGreaterThan(0);
    expect(lots.count).toBe(few.count);
  });
});
