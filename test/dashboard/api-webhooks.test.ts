// Settings → API & Webhooks through the real app: a key shown once and working at once (the old one refused), a
// second send of the same form making nothing, recent sign-in, the API-access switch as the API sees it, plans,
// the default agent, the webhook URL under callctl's rules, the secret shown once, an endpoint disabled by a 410 and
// enabled again, the delivery log and resends, and an audit entry for every change.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient, setApiAccess } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import type { App } from '../../src/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { webhookUrlProblem } from '../../src/webhooks/url-policy.js';
import { AFFECTED_NAMES_MAX } from '../../src/routes/dashboard/api-webhooks/access.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger as triggerDirect } from '../helpers/trigger.js';
import { callctl } from '../helpers/cli.js';
import { match } from '../helpers/matchers.js';
import { waitFor } from '../helpers/wait.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor, type Answer } from './helpers.js';
import { forceDeliveries, forceDelivery, insertDeliveryRows } from '../helpers/seed.js';

const OWN = '/dashboard/settings/api-webhooks';
/** The service's clock runs with real time, `offset` ahead (a sign-in grown old). */
let offset = 0;
let app: App;
let databaseUrl: string;
let agencyId: string;
let clientId: string;
let agentId: string;
let visitor: Visitor;

/** The trigger as a client sends it: the app runs behind a TLS-terminating proxy (TLS_MODE=proxy). */
const trigger = (target: App, key: string, body: unknown = { phone_number: '+14155552671' }) =>
  triggerDirect(target, key, body, { 'x-forwarded-proto': 'https' });

/** The named fields of the form posting to `action` on a page (what a browser would send, before the user's input). */
function formFields(body: string, action: string): Record<string, string> {
  const form = [...body.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].find((f) => f[1] === action);
  if (!form) throw new Error(`no form for ${action}`);
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
    fields[input[1]!] = input[2]!.replace(/&amp;/g, '&');
  return fields;
}

/** An attempt's row in the delivery log: its HTTP status, then its latency. */
const ATTEMPT = (status: number) =>
  new RegExp(`<td data-label="Response">HTTP ${status}</td>\\s*<td data-label="Latency">\\d+ ms</td>`);
const DELIVERED = '<span class="badge" data-tone="ok">Delivered</span>';
/** The calls of the deliveries a log page shows, in order. */
const callsShown = (body: string) =>
  [...body.matchAll(/<dt>Call<\/dt><dd><a href="\/dashboard\/calls\/([0-9a-f-]{36})">/g)].map((m) => m[1]);
const shownKey = (res: Answer) => /value="(svc_sk_[0-9A-Za-z]+)"/.exec(res.body)?.[1];
const shownSecret = (res: Answer) => /value="(whsec_[^"]+)"/.exec(res.body)?.[1];
const flashOf = async (v: Visitor, res: Answer) => {
  expect(res.status).toBe(303);
  return /<p class="notice (?:ok|error)" role="status">([^<]*)<\/p>/.exec((await v.get(res.location!)).body)?.[1];
};
const auditActions = async (accountId: string) =>
  await prismaOf(app).auditEntry.findMany({
    where: { accountId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { action: true, actorKind: true, actorUserId: true, detail: true },
  });

async function signedIn(email: string): Promise<Visitor> {
  const v = new Visitor(app);
  v.ip = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
  expect((await v.signIn(email)).status).toBe(303);
  return v;
}

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp({
    env: { ...DASHBOARD_ENV, WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    clock: () => new Date(Date.now() + offset),
    jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
  }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Acme Agency' }));
  ({ id: clientId } = await createClient(app.storage, { agencyId, name: 'Client <One>', now: app.now() }));
  ({ id: agentId } = await createAgent(app.storage, {
    accountId: agencyId,
    name: 'Front desk',
    phone: '+14155550100',
    now: app.now(),
  }));
  await createUserWithPassword(app.storage, agencyId, 'owner@acme.example');
  visitor = await signedIn('owner@acme.example');
});

describe('the API key', () => {
  let firstKey: string;

  it('has none at first; the first key is shown once, with no-store, and works at once', async () => {
    expect((await visitor.get(OWN)).body).toContain('No key yet.');
    // The default agent first, so that a trigger without agent_id is accepted.
    await visitor.submit(OWN, `${OWN}/default-agent`, { agent_id: agentId });
    const page = await visitor.get(`${OWN}/key`);
    expect(page.status).toBe(200);
    const res = await visitor.request('POST', `${OWN}/key`, formFields(page.body, `${OWN}/key`));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('shown only this once');
    // True of a key: only its digest is kept.
    expect(res.body).toContain('It is not stored in readable form (only a digest of it is kept)');
    expect(res.body).toMatch(/<input id="secret-value" class="secret-value" type="text" readonly value="svc_sk_/);
    expect(res.body).toContain('<script src="/dashboard/assets/copy.js" defer></script>');
    firstKey = shownKey(res)!;
    expect((await visitor.get(OWN)).body).toContain('Not used yet');
    expect((await trigger(app, firstKey)).statusCode).toBe(200);
    // The settings show its prefix and when it was created and last used (written after the response), never the key.
    const settings = await waitFor(
      async () => (await visitor.get(OWN)).body,
      (body) => body.includes('(to the minute)'),
    );
    expect(settings).toContain(`${firstKey.slice(0, 12)}…`);
    expect(settings).not.toContain(firstKey);
  });

  it('a new key needs the confirmation; then the old key is refused at once and the new one accepted', async () => {
    const page = await visitor.get(`${OWN}/key`);
    expect(page.body).toContain('stops working at once');
    const fields = formFields(page.body, `${OWN}/key`);
    const unconfirmed = await visitor.request('POST', `${OWN}/key`, fields);
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.body).toContain('Tick the box to confirm that the current key stops working at once.');
    expect(await prismaOf(app).apiKey.count({ where: { accountId: agencyId } })).toBe(1);

    const res = await visitor.request('POST', `${OWN}/key`, { ...fields, confirm: 'on' });
    expect(res.status).toBe(200);
    const newKey = shownKey(res)!;
    expect(newKey).not.toBe(firstKey);
    const refused = await trigger(app, firstKey);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ success: false, error: 'Invalid API key' });
    expect((await trigger(app, newKey)).statusCode).toBe(200);

    // A reload sends the same form again: nothing is generated, and the page says why.
    const again = await visitor.request('POST', `${OWN}/key`, { ...fields, confirm: 'on' });
    expect(again.status).toBe(200);
    expect(again.headers['cache-control']).toBe('no-store');
    expect(again.body).toContain('This key was already shown; generate a new one if you did not copy it.');
    expect(shownKey(again)).toBeUndefined();
    expect(await prismaOf(app).apiKey.count({ where: { accountId: agencyId } })).toBe(2);
    expect((await trigger(app, newKey)).statusCode).toBe(200);
    // Back to the settings (a GET): the key is not there.
    expect((await visitor.get(OWN)).body).not.toContain(newKey);

    const generated = (await auditActions(agencyId)).filter((e) => e.action === 'key_generated');
    expect(generated).toHaveLength(2);
    expect(generated[1]).toMatchObject({
      actorKind: 'user',
      detail: { prefix: newKey.slice(0, 12), previous_prefix: firstKey.slice(0, 12) },
    });
  });

  it('two sends of one form at once generate one key', async () => {
    const page = await visitor.get(`${OWN}/key`);
    const fields = { ...formFields(page.body, `${OWN}/key`), confirm: 'on' };
    const before = await prismaOf(app).apiKey.count({ where: { accountId: agencyId } });
    const answers = await Promise.all([
      visitor.request('POST', `${OWN}/key`, fields),
      visitor.request('POST', `${OWN}/key`, fields),
    ]);
    expect(answers.map(shownKey).filter(Boolean)).toHaveLength(1);
    expect(await prismaOf(app).apiKey.count({ where: { accountId: agencyId } })).toBe(before + 1);
  });

  it('needs a recent sign-in: an older one re-enters the password first, then comes back to the key page', async () => {
    const v = await signedIn('owner@acme.example');
    const page = await v.get(`${OWN}/key`);
    const fields = { ...formFields(page.body, `${OWN}/key`), confirm: 'on' };
    offset = 11 * 60_000;
    try {
      const shown = await v.get(`${OWN}/key`);
      expect(shown.status).toBe(303);
      expect(shown.location).toBe(`/dashboard/confirm-password?next=${encodeURIComponent(`${OWN}/key`)}`);
      const keys = await prismaOf(app).apiKey.count({ where: { accountId: agencyId } });
      const posted = await v.request('POST', `${OWN}/key`, fields);
      expect(posted.status).toBe(303);
      expect(posted.location).toBe(`/dashboard/confirm-password?next=${encodeURIComponent(`${OWN}/key`)}`);
      expect(await prismaOf(app).apiKey.count({ where: { accountId: agencyId } })).toBe(keys);
      // The webhook form too.
      expect((await v.get(`${OWN}/webhook`)).location).toBe(
        `/dashboard/confirm-password?next=${encodeURIComponent(`${OWN}/webhook`)}`,
      );
      const confirmed = await v.submit(shown.location!, '/dashboard/confirm-password', {
        password: 'correct horse battery staple',
      });
      expect(confirmed.location).toBe(`${OWN}/key`);
      expect((await v.get(`${OWN}/key`)).status).toBe(200);
    } finally {
      offset = 0;
    }
  });
});

/** "Switch API access off" on `base`, then "Yes, switch API access off" on the confirmation page it answers with. */
async function switchOff(base: string) {
  const asked = await visitor.submit(base, `${base}/api-access`);
  expect(asked.status).toBe(200);
  return visitor.request('POST', `${base}/api-access`, formFields(asked.body, `${base}/api-access`));
}

describe('API access', () => {
  it('off names at most AFFECTED_NAMES_MAX of the clients it stops, and says how many more', async () => {
    const { id: many } = await createAgency(app.storage, { name: 'Many Clients', plan: 'agency' });
    for (let i = 0; i < AFFECTED_NAMES_MAX + 7; i++)
      await createClient(app.storage, { agencyId: many, name: `Client ${String(i).padStart(3, '0')}`, now: app.now() });
    const email = 'many-clients@example.test';
    await createUserWithPassword(app.storage, many, email);
    const owner = new Visitor(app);
    owner.ip = '10.9.8.7';
    expect((await owner.signIn(email)).status).toBe(303);
    const asked = await owner.submit(OWN, `${OWN}/api-access`);
    expect(asked.status).toBe(200);
    expect(asked.body).toContain(`these ${AFFECTED_NAMES_MAX + 7} clients`);
    expect([...asked.body.matchAll(/<li>Client \d{3}<\/li>/g)]).toHaveLength(AFFECTED_NAMES_MAX);
    expect(asked.body).toContain('<li>Client 000</li>');
    expect(asked.body).not.toContain(`<li>Client ${String(AFFECTED_NAMES_MAX).padStart(3, '0')}</li>`);
    expect(asked.body).toContain('and 7 more (the <a href="/dashboard/clients">Clients</a> page lists every client).');
  });

  it('off asks first, naming the clients whose keys stop too; nothing changes until confirmed (issue 21, point 10)', async () => {
    const { id: quiet } = await createClient(app.storage, { agencyId, name: 'Quiet <Two>', now: app.now() });
    await setApiAccess(app.storage, quiet, false, undefined, app.now());
    const asked = await visitor.submit(OWN, `${OWN}/api-access`);
    expect(asked.status).toBe(200);
    expect(asked.body).toContain('<title>Switch API access off? · Outbound calls</title>');
    // The client whose own switch is on is named; the one already off is not affected.
    expect(asked.body).toMatch(
      /It also stops the API for <strong>this client<\/strong>[^<]*:\s*<\/p>\s*<ul class="affected">\s*<li>Client &lt;One&gt;<\/li>\s*<\/ul>/,
    );
    expect(asked.body).not.toContain('Quiet &lt;Two&gt;');
    expect(asked.body).toContain('>Yes, switch API access off</button>');
    expect(asked.body).toContain(`<a href="${OWN}">Cancel: keep API access on</a>`);
    // Nothing switched, nothing audited yet.
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: agencyId } })).apiAccessEnabled).toBe(true);
    expect((await auditActions(agencyId)).filter((e) => e.action === 'api_access_switched')).toEqual([]);
    // A client's own switch asks too, naming no clients.
    const clientPage = `/dashboard/clients/${clientId}/api-webhooks`;
    const clientAsked = await visitor.submit(clientPage, `${clientPage}/api-access`);
    expect(clientAsked.status).toBe(200);
    expect(clientAsked.body).toContain("every request made with Client &lt;One&gt;'s API key");
    expect(clientAsked.body).not.toContain('It also stops');
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: clientId } })).apiAccessEnabled).toBe(true);
  });

  it('off: the API answers 403 API access is disabled at the next request; on again: accepted', async () => {
    const page = await visitor.get(`${OWN}/key`);
    const key = shownKey(
      await visitor.request('POST', `${OWN}/key`, { ...formFields(page.body, `${OWN}/key`), confirm: 'on' }),
    )!;
    const off = await switchOff(OWN);
    expect(await flashOf(visitor, off)).toContain('API access is off');
    const refused = await trigger(app, key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ success: false, error: 'API access is disabled' });
    expect((await visitor.get(OWN)).body).toContain('Switch API access on');
    expect(await flashOf(visitor, await visitor.submit(OWN, `${OWN}/api-access`))).toBe('API access is on.');
    expect((await trigger(app, key)).statusCode).toBe(200);
    const switched = (await auditActions(agencyId))
      .filter((e) => e.action === 'api_access_switched')
      .map((e) => e.detail);
    expect(switched).toEqual([{ api_access: 'off' }, { api_access: 'on' }]);
  });

  it("a client's page says when the agency's switch overrides it, and its key follows the agency's", async () => {
    const clientPage = `/dashboard/clients/${clientId}/api-webhooks`;
    const page = await visitor.get(`${clientPage}/key`);
    expect(page.status).toBe(200);
    const clientKey = shownKey(
      await visitor.request('POST', `${clientPage}/key`, formFields(page.body, `${clientPage}/key`)),
    )!;
    const { id: clientAgent } = await createAgent(app.storage, {
      accountId: clientId,
      name: 'Client agent',
      phone: '+14155550101',
      now: app.now(),
    });
    await visitor.submit(clientPage, `${clientPage}/default-agent`, { agent_id: clientAgent });
    expect((await trigger(app, clientKey)).statusCode).toBe(200);
    expect((await visitor.get(clientPage)).body).not.toContain('overrides this switch');

    await switchOff(OWN); // the agency off
    const shown = (await visitor.get(clientPage)).body;
    expect(shown).toContain("The agency's API access is off, which overrides this switch");
    expect(shown).toContain('API access is <strong>on</strong>');
    expect(shown).toContain(`href="/dashboard/clients/${clientId}"`);
    expect(shown).toContain('Client &lt;One&gt;');
    // The client's detail page and the clients list say what works, not only the client's own switch (issue 21, point 11).
    const detail = (await visitor.get(`/dashboard/clients/${clientId}`)).body;
    expect(detail).toContain(
      '<dt>API access</dt><dd>off: the agency&#39;s API access is off, which overrides this client&#39;s switch (on)</dd>',
    );
    const list = (await visitor.get('/dashboard/clients')).body;
    expect(list).toContain("The agency's API access is off: every client's key is refused");
    expect(list).toContain(
      '<td data-label="API access">off: the agency&#39;s API access is off, which overrides this client&#39;s switch (on)</td>',
    );
    expect((await trigger(app, clientKey)).statusCode).toBe(403);
    await visitor.submit(OWN, `${OWN}/api-access`); // on again
    expect((await trigger(app, clientKey)).statusCode).toBe(200);
    expect((await visitor.get(`/dashboard/clients/${clientId}`)).body).toContain('<dt>API access</dt><dd>on</dd>');
    // The client's own changes are audited on the client.
    expect((await auditActions(clientId)).map((e) => e.action)).toEqual(
      expect.arrayContaining(['key_generated', 'default_agent_changed']),
    );
  });

  it("the agency's own id is no client page, and a client user has no client pages but their own settings", async () => {
    expect((await visitor.get(`/dashboard/clients/${agencyId}/api-webhooks`)).status).toBe(404);
    await createUserWithPassword(app.storage, clientId, 'someone@client.example');
    const clientUser = await signedIn('someone@client.example');
    expect((await clientUser.get(`/dashboard/clients/${clientId}/api-webhooks`)).status).toBe(404);
    const own = await clientUser.get(OWN);
    expect(own.status).toBe(200);
    expect(own.body).not.toContain(`href="/dashboard/clients/${clientId}"`);
    expect(own.body).toContain('Client agent');
  });

  it('a plan other than agency sees the section with "API access requires the agency plan", and cannot generate or switch', async () => {
    const { id: starter } = await createAgency(app.storage, { name: 'Starter Co', plan: 'starter' });
    await createUserWithPassword(app.storage, starter, 'owner@starter.example');
    const v = await signedIn('owner@starter.example');
    const page = await v.get(OWN);
    expect(page.status).toBe(200);
    expect(page.body).toContain('API access requires the agency plan');
    expect(page.body).not.toContain(`href="${OWN}/key"`);
    expect(page.body).toMatch(/<button type="submit"[^>]* disabled>Switch API access off<\/button>/);
    const keyPage = await v.get(`${OWN}/key`);
    expect(keyPage.body).toContain('API access requires the agency plan');
    expect(keyPage.body).not.toContain(`action="${OWN}/key"`);
    const posted = await v.request('POST', `${OWN}/key`, { _csrf: v.lastCsrf!, replaces: 'none' });
    expect(posted.status).toBe(400);
    expect(posted.body).toContain('API access requires the agency plan');
    const switched = await v.submit(OWN, `${OWN}/api-access`);
    expect(switched.status).toBe(400);
    expect(await prismaOf(app).apiKey.count({ where: { accountId: starter } })).toBe(0);
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: starter } })).apiAccessEnabled).toBe(true);
  });
});

describe('the default agent', () => {
  it("offers the agency's own agents, sets one that a trigger without agent_id then uses, and refuses a client's or another agency's", async () => {
    const { id: second } = await createAgent(app.storage, {
      accountId: agencyId,
      name: 'Night shift',
      phone: '+14155550102',
      now: app.now(),
    });
    const page = (await visitor.get(OWN)).body;
    expect(page).toContain('Night shift');
    // An account's default agent is one of its own: its clients' agents are not offered, and refused when posted.
    const clientAgent = await prismaOf(app).agent.findFirstOrThrow({
      where: { accountId: clientId, name: 'Client agent' },
    });
    expect(page).not.toContain('Client agent (Client &lt;One&gt;)');
    expect(page).not.toContain(`value="${clientAgent.id}"`);
    const notOwn = await visitor.submit(OWN, `${OWN}/default-agent`, { agent_id: clientAgent.id });
    expect(notOwn.status).toBe(400);
    expect(notOwn.body).toContain('That agent is not one this account may use.');
    const res = await visitor.submit(OWN, `${OWN}/default-agent`, { agent_id: second });
    expect(await flashOf(visitor, res)).toContain('The default agent is set');
    const keyPage = await visitor.get(`${OWN}/key`);
    const key = shownKey(
      await visitor.request('POST', `${OWN}/key`, { ...formFields(keyPage.body, `${OWN}/key`), confirm: 'on' }),
    )!;
    const accepted = await trigger(app, key, { phone_number: '+14155552671' });
    expect(accepted.statusCode).toBe(200);
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(accepted) } })).agentId).toBe(second);

    const { id: otherAgency } = await createAgency(app.storage, { name: 'Other' });
    const { id: foreign } = await createAgent(app.storage, {
      accountId: otherAgency,
      name: 'Foreign',
      phone: '+14155550103',
      now: app.now(),
    });
    const refused = await visitor.submit(OWN, `${OWN}/default-agent`, { agent_id: foreign });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('That agent is not one this account may use.');
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: agencyId } })).defaultAgentId).toBe(second);
    // "None set" and a value that is no id at all: refused by the schema, with the same words.
    for (const agent_id of ['', 'not-an-id']) {
      const notAnId = await visitor.submit(OWN, `${OWN}/default-agent`, { agent_id });
      expect(notAnId.status, agent_id).toBe(400);
      expect(notAnId.body, agent_id).toContain('That agent is not one this account may use. Choose one from the list.');
    }
    const changes = (await auditActions(agencyId)).filter((e) => e.action === 'default_agent_changed');
    expect(changes.at(-1)).toMatchObject({
      actorKind: 'user',
      detail: { agent_id: second, agent_name: 'Night shift', previous_agent_id: agentId },
    });
  });
});

describe('the webhook endpoint', () => {
  let receiver: Receiver;
  let key: string;

  /** A call that fails at once (canceled): one call.failed delivery to the endpoint. */
  async function failedCall(): Promise<string> {
    const callId = callIdOf(await trigger(app, key, { phone_number: '+14155552671' }));
    await applyCallUpdate(
      app.storage,
      callId,
      { kind: 'failed', reason: 'canceled' },
      { now: app.now(), source: 'operator' },
    );
    return callId;
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    const keyPage = await visitor.get(`${OWN}/key`);
    key = shownKey(
      await visitor.request('POST', `${OWN}/key`, { ...formFields(keyPage.body, `${OWN}/key`), confirm: 'on' }),
    )!;
  });

  it('shows the secret once when set; a second send of the form sets nothing', async () => {
    expect((await visitor.get(OWN)).body).toContain('No webhook endpoint yet');
    const page = await visitor.get(`${OWN}/webhook`);
    const fields = { ...formFields(page.body, `${OWN}/webhook`), url: receiver.url };
    const res = await visitor.request('POST', `${OWN}/webhook`, fields);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const secret = shownSecret(res)!;
    expect(secret).toMatch(/^whsec_/);
    const again = await visitor.request('POST', `${OWN}/webhook`, fields);
    expect(again.status).toBe(200);
    expect(again.body).toContain('This signing secret was already shown');
    expect(shownSecret(again)).toBeUndefined();
    // Stored sealed (docs/operations.md#secrets), it opens to the secret shown.
    expect((await app.storage.endpoints.findEndpointOfAccount(agencyId))?.secret).toBe(secret);
    // Kept to sign with: the page says so, and not that it is unreadable (issue 45.11).
    expect(res.body).not.toContain('not stored in readable form');
    expect(res.body).toContain(
      'The service keeps it in its database, encrypted with its SECRETS_KEY, because it signs every event with it',
    );
    const settings = (await visitor.get(OWN)).body;
    expect(settings).toContain(receiver.url);
    expect(settings).not.toContain(secret);
    expect((await auditActions(agencyId)).filter((e) => e.action === 'webhook_set').map((e) => e.detail)).toEqual([
      { url: receiver.url },
    ]);
  });

  it('a new URL keeps the signing secret (audited as a URL change); a second send changes nothing', async () => {
    // The stored secret opened (it is sealed at rest).
    const endpoint = async () => (await app.storage.endpoints.findEndpointOfAccount(agencyId))!;
    const before = await endpoint();
    const page = await visitor.get(`${OWN}/webhook`);
    expect(page.body).toContain('Also rotate the signing secret');
    expect(page.body).toMatch(/<input type="checkbox" name="rotate" value="on"[^>]*>/);
    expect(page.body).not.toMatch(/name="rotate"[^>]*checked/);
    const moved = `${receiver.url}?moved=1`;
    const fields = { ...formFields(page.body, `${OWN}/webhook`), url: moved };
    const res = await visitor.request('POST', `${OWN}/webhook`, fields);
    expect(shownSecret(res)).toBeUndefined();
    expect(await flashOf(visitor, res)).toBe(
      `The webhook URL is now ${moved}. The signing secret is unchanged: your receiver keeps verifying with it.`,
    );
    expect(await endpoint()).toMatchObject({ url: moved, secret: before.secret, enabled: true });
    expect((await auditActions(agencyId)).filter((e) => e.action === 'webhook_url_changed')).toEqual([
      match.objectContaining({ actorKind: 'user', detail: { url: moved, previous_url: receiver.url } }),
    ]);
    // The same form again (a double click): the endpoint is no longer the one it was made for; nothing changes.
    const again = await visitor.request('POST', `${OWN}/webhook`, { ...fields, url: receiver.url });
    expect(await flashOf(visitor, again)).toContain('nothing was changed');
    expect((await endpoint()).url).toBe(moved);
    // The secret kept still signs what is delivered (verified with the Standard Webhooks library).
    const fresh = await visitor.get(`${OWN}/webhook`);
    await visitor.request('POST', `${OWN}/webhook`, { ...formFields(fresh.body, `${OWN}/webhook`), url: receiver.url });
    expect(await endpoint()).toMatchObject({ url: receiver.url, secret: before.secret });
  });

  it('"Also rotate the signing secret" makes a new secret, shown once', async () => {
    const before = (await app.storage.endpoints.findEndpointOfAccount(agencyId))!.secret;
    const page = await visitor.get(`${OWN}/webhook`);
    const res = await visitor.request('POST', `${OWN}/webhook`, {
      ...formFields(page.body, `${OWN}/webhook`),
      url: receiver.url,
      rotate: 'on',
    });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const secret = shownSecret(res)!;
    expect(secret).not.toBe(before);
    expect((await app.storage.endpoints.findEndpointOfAccount(agencyId))?.secret).toBe(secret);
    // With how to verify it, Node and Python, each with a Copy button.
    expect(res.body).toContain('new Webhook(process.env.WEBHOOK_SECRET)');
    expect(res.body).toContain('from standardwebhooks.webhooks import Webhook');
    expect(res.body).toContain('data-copy="verify-node"');
    expect((await auditActions(agencyId)).filter((e) => e.action === 'webhook_set').at(-1)).toMatchObject({
      detail: { url: receiver.url },
    });
  });

  it('disabled by a 410 (audited as the service), shown with its reason, its delivery held until enabled again', async () => {
    receiver.respond = () => ({ status: 410 });
    const callId = await failedCall();
    await app.deliveryWorker!.settle();
    const settings = (await visitor.get(OWN)).body;
    // In the pages' one time format, not raw ISO (issue 21, point 11).
    expect(settings).toMatch(/Disabled: answered 410 Gone at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</);
    expect(settings).toContain('Enable again and send the held event');
    const disabled = (await auditActions(agencyId)).filter((e) => e.action === 'webhook_disabled');
    expect(disabled).toEqual([
      {
        action: 'webhook_disabled',
        actorKind: 'service',
        actorUserId: null,
        detail: match.objectContaining({ url: receiver.url, reason: match.stringMatching(/410 Gone/) }),
      },
    ]);

    const log = await visitor.get(`${OWN}/deliveries`);
    expect(log.body).toContain(callId);
    // Each delivery links to its call's detail view.
    expect(log.body).toContain(`href="/dashboard/calls/${callId}"`);
    expect(log.body).toMatch(ATTEMPT(410));
    expect(log.body).toContain('Deliveries cannot be resent while the endpoint is disabled');
    const delivery = await prismaOf(app).webhookDelivery.findFirstOrThrow({ where: { callId } });
    // Held (the 410 reached no one), not failed: no Resend; one sent by hand is refused with the reason.
    expect(log.body).not.toContain(`/deliveries/${delivery.id}/resend`);
    const refused = await visitor.request('POST', `${OWN}/deliveries/${delivery.id}/resend`, {
      _csrf: visitor.lastCsrf!,
    });
    expect(refused.status).toBe(400);
    // In tenant words: no operator command, no raw ISO time.
    expect(refused.body).toMatch(
      /The webhook endpoint is disabled \(answered 410 Gone at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\): enable it again on the API &amp; Webhooks page first/,
    );
    expect(refused.body).not.toContain('callctl');
    expect((await prismaOf(app).webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status).toBe('held');
    // A delivery id that is no UUID is no delivery: 404, like an unknown one.
    const notAnId = await visitor.request('POST', `${OWN}/deliveries/not-a-delivery/resend`, {
      _csrf: visitor.lastCsrf!,
    });
    expect(notAnId.status).toBe(404);

    receiver.respond = () => ({ status: 200 });
    const before = receiver.received.length;
    const enabled = await visitor.submit(OWN, `${OWN}/webhook/enable`);
    expect(await flashOf(visitor, enabled)).toContain(
      'The endpoint is enabled again, with the same signing secret. 1 held event is being sent now.',
    );
    expect((await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: agencyId } })).enabled).toBe(
      true,
    );
    expect((await auditActions(agencyId)).filter((e) => e.action === 'webhook_enabled')).toHaveLength(1);
    await app.deliveryWorker!.settle();
    expect(receiver.received.slice(before).map((r) => r.headers['webhook-id'])).toEqual([delivery.id]);
    expect((await prismaOf(app).webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status).toBe(
      'succeeded',
    );

    const resent = await visitor.submit(`${OWN}/deliveries`, `${OWN}/deliveries/${delivery.id}/resend`);
    expect(await flashOf(visitor, resent)).toContain('will be sent again');
    await app.deliveryWorker!.settle();
    expect((await prismaOf(app).webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status).toBe(
      'succeeded',
    );
    const audited = (await auditActions(agencyId)).filter((e) => e.action === 'deliveries_resent');
    expect(audited.at(-1)).toMatchObject({
      actorKind: 'user',
      detail: { delivery_id: delivery.id, call_id: callId, event_type: 'call.failed' },
    });
    // Pending (due in an hour): no Resend button, and a resend is refused with the reason.
    await forceDelivery(prismaOf(app), delivery.id, {
      status: 'pending',
      nextAttemptAt: new Date(Date.now() + 3_600_000),
    });
    expect((await visitor.get(`${OWN}/deliveries`)).body).not.toContain(`/deliveries/${delivery.id}/resend`);
    const refusedPending = await visitor.request('POST', `${OWN}/deliveries/${delivery.id}/resend`, {
      _csrf: visitor.lastCsrf!,
    });
    expect(refusedPending.status).toBe(400);
    expect(refusedPending.body).toContain('is still pending');
    await forceDelivery(prismaOf(app), delivery.id, { status: 'succeeded' });
  });

  it('the log: newest first, failed only, every attempt; resend every failed delivery since a time (only those)', async () => {
    receiver.respond = () => ({ status: 500 });
    const old = await failedCall();
    const recent = [await failedCall(), await failedCall()];
    await app.deliveryWorker!.settle();
    // Their first attempt failed (500): made failed as if their retries had run out.
    await forceDeliveries(
      prismaOf(app),
      { callId: { in: [old, ...recent] } },
      { status: 'failed', completedAt: new Date() },
    );
    // The old one two hours earlier.
    await forceDeliveries(prismaOf(app), { callId: old }, { createdAt: new Date(Date.now() - 2 * 3_600_000) });

    const failed = (await visitor.get(`${OWN}/deliveries?failed=1`)).body;
    const order = callsShown(failed);
    expect(new Set(order.slice(0, 2))).toEqual(new Set(recent));
    expect(order[2]).toBe(old);
    expect(failed).toMatch(ATTEMPT(500));
    const all = (await visitor.get(`${OWN}/deliveries`)).body;
    // "Delivered", not the stored "succeeded" (issue 21, point 11), as a badge.
    expect(all).toContain(DELIVERED);
    expect(all).not.toMatch(/>succeeded</);
    expect(failed).not.toContain(DELIVERED);
    expect(callsShown((await visitor.get(`${OWN}/deliveries?status=failed`)).body)).toEqual(order);

    const since = new Date(Date.now() - 3_600_000).toISOString().slice(0, 16);
    // Not a time, and times that do not exist (the same parser as the Calls filters': no roll-over into March).
    for (const wrong of ['yesterday', '2054-02-30 10:00', '2054-04-31T10:00', '2054-01-01 24:00']) {
      const bad = await visitor.submit(`${OWN}/deliveries`, `${OWN}/deliveries/resend-failed`, { since: wrong });
      expect(bad.status, wrong).toBe(400);
      expect(bad.body).toContain('Enter the date and time as YYYY-MM-DD HH:MM (UTC).');
    }
    receiver.respond = () => ({ status: 200 });
    const res = await visitor.submit(`${OWN}/deliveries`, `${OWN}/deliveries/resend-failed`, { since });
    expect(await flashOf(visitor, res)).toMatch(/^\d+ failed deliveries since .* will be sent again in a moment\.$/);
    const statuses = async (callIds: string[]) =>
      (await prismaOf(app).webhookDelivery.findMany({ where: { callId: { in: callIds } } })).map((d) => d.status);
    expect(await statuses([old])).toEqual(['failed']);
    expect(await statuses(recent)).not.toContain('failed');
    await app.deliveryWorker!.settle();
    expect(await statuses(recent)).toEqual(['succeeded', 'succeeded']);
    expect((await auditActions(agencyId)).filter((e) => e.action === 'deliveries_resent').at(-1)).toMatchObject({
      actorKind: 'user',
      detail: { failed_since: `${since}:00.000Z`, count: match.any(Number) },
    });
  });

  it('pages the log with a cursor that neither loses nor repeats a delivery', async () => {
    const endpoint = await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: agencyId } });
    const total = await prismaOf(app).webhookDelivery.count({ where: { endpointId: endpoint.id } });
    // Enough for two pages of 25, at one instant (ties broken by id).
    const calls = await prismaOf(app).call.findMany({ where: { accountId: agencyId }, take: 1, select: { id: true } });
    const event = await prismaOf(app).callEvent.findFirstOrThrow({ where: { callId: calls[0]!.id } });
    const at = new Date();
    await insertDeliveryRows(prismaOf(app), {
      data: Array.from({ length: 30 }, () => ({
        endpointId: endpoint.id,
        callId: calls[0]!.id,
        callEventId: event.id,
        eventType: 'call.started',
        payload: '{}',
        status: 'succeeded' as const,
        createdAt: at,
      })),
    });
    const seen: string[] = [];
    let url: string | undefined = `${OWN}/deliveries`;
    while (url) {
      const body: string = (await visitor.get(url)).body;
      seen.push(...[...body.matchAll(/<article class="delivery" id="delivery-([0-9a-f-]{36})">/g)].map((m) => m[1]!));
      url = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(body)?.[1]?.replace(/&amp;/g, '&');
    }
    expect(seen).toHaveLength(total + 30);
    expect(new Set(seen).size).toBe(total + 30);
  });
});

describe('webhook URLs under the rules of callctl', () => {
  it('refuses http and private addresses with the same rules, in tenant words (no environment variable)', async () => {
    const strict = await buildTestApp({ env: DASHBOARD_ENV });
    const { id } = await createAgency(strict.app.storage, { name: 'Strict' });
    await createUserWithPassword(strict.app.storage, id, 'owner@strict.example');
    const v = new Visitor(strict.app);
    await v.signIn('owner@strict.example');
    for (const url of [
      'http://hooks.example.com/in',
      'https://127.0.0.1/in',
      'https://10.1.2.3/in',
      'https://metadata.google.internal/x',
    ]) {
      const res = await v.submit(`${OWN}/webhook`, `${OWN}/webhook`, { url });
      expect(res.status, url).toBe(400);
      const message = webhookUrlProblem(url, false, 'tenant')!;
      expect(message).toMatch(/^This address is not allowed: /);
      expect(res.body.replace(/&#39;/g, "'").replace(/&quot;/g, '"')).toContain(message);
      // callctl's operator hint stays out of a tenant's page (issue 21, point 11).
      expect(webhookUrlProblem(url, false)).toContain('WEBHOOK_ALLOW_PRIVATE_TARGETS');
      // The CSRF tokens are random text that can hold any capitals and underscores, so leave them out.
      const visible = res.body.replace(/name="_csrf" value="[^"]*"/g, '');
      expect(visible).not.toMatch(/WEBHOOK_ALLOW_PRIVATE_TARGETS|set it for the server|\b[A-Z]{3,}_[A-Z_]{3,}\b/);
      expect(res.body).toContain(`value="${url}"`);
    }
    expect(await prismaOf(strict.app).webhookEndpoint.count()).toBe(0);
    expect(await prismaOf(strict.app).auditEntry.count({ where: { action: 'webhook_set' } })).toBe(0);
  });
});

describe('callctl is audited too', () => {
  it('writes its changes as the operator', async () => {
    const { code } = await callctl(databaseUrl, ['api-access', clientId, 'off', '--json']);
    expect(code).toBe(0);
    expect((await auditActions(clientId)).at(-1)).toMatchObject({
      action: 'api_access_switched',
      actorKind: 'operator',
      actorUserId: null,
      detail: { api_access: 'off' },
    });
  });
});
