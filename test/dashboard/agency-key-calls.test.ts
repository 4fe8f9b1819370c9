// A call an agency's key placed on one of its client's agents in the dashboard: listed for the client (its Calls list,
// its searches, its call page), marked "Triggered by <agency> (agency key)", its webhook deliveries left to the
// agency's pages; a sibling client's user gets 404 and never sees it; the agency's list shows it under the client. And
// an account's default agent is one of its own: the settings offer no client's agent and refuse one posted anyway.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

let app: App;
const tenants = {} as Record<'A' | 'A1' | 'A2', Tenant>;
const visitors = {} as Record<keyof typeof tenants, Visitor>;
let listed: string;
let own: string;

const MARK = 'Triggered by Acme Agency (agency key)';

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenants.A = await createTenant(app.storage, { name: 'Acme Agency' });
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client One' });
  tenants.A2 = await createClientTenant(app.storage, tenants.A.accountId);
  for (const [name, tenant] of Object.entries(tenants) as [keyof typeof tenants, Tenant][]) {
    const email = `${name.toLowerCase()}@agency-key.example`;
    await createUserWithPassword(app.storage, tenant.accountId, email);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.9.0.${Object.keys(visitors).length}`;
    expect((await visitors[name].signIn(email)).status).toBe(303);
  }
  const https = { 'x-forwarded-proto': 'https' };
  const body = { phone_number: '+14155550501', agent_id: tenants.A1.agentId, name: 'Zed Listed' };
  listed = callIdOf(await trigger(app, tenants.A.key, body, https));
  own = callIdOf(await trigger(app, tenants.A1.key, { phone_number: '+14155550502', name: 'Own Call' }, https));
});

describe("the client's Calls list and call page", () => {
  it("lists the agency's call on the client's agent beside its own, marked", async () => {
    const page = await visitors.A1.get('/dashboard/calls');
    expect(page.status).toBe(200);
    expect(page.body).toContain(`/dashboard/calls/${listed}`);
    expect(page.body).toContain(`/dashboard/calls/${own}`);
    expect(page.body).toContain(html(MARK));
    // Newest first: the client's own call came after.
    expect(page.body.indexOf(own)).toBeLessThan(page.body.indexOf(listed));
  });

  it('finds it by name, number, agent and call id', async () => {
    for (const query of [
      'name=Zed',
      'number=%2B14155550501',
      `agent=${tenants.A1.agentId}`,
      `call=${listed}`,
      'status=initiated',
    ]) {
      const page = await visitors.A1.get(`/dashboard/calls?${query}`);
      expect(page.status, query).toBe(200);
      expect(page.body, query).toContain(`/dashboard/calls/${listed}`);
    }
  });

  it("shows its page with who triggered it, without the agency's deliveries", async () => {
    const page = await visitors.A1.get(`/dashboard/calls/${listed}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<dt>Triggered by</dt><dd class="triggered-by">Acme Agency (agency key)</dd>');
    expect(page.body).toContain("go to Acme Agency's endpoint");
    expect(page.body).not.toContain('/api-webhooks/deliveries');
    // Its number goes on the client's own do-not-call list, which covers the call (not the agency's).
    expect(page.body).toContain('action="/dashboard/do-not-call/add"');
  });

  it("is a 404 for a sibling client's user, and absent from its list", async () => {
    expect((await visitors.A2.get(`/dashboard/calls/${listed}`)).status).toBe(404);
    const list = await visitors.A2.get('/dashboard/calls');
    expect(list.body).not.toContain(listed);
    const search = await visitors.A2.get(`/dashboard/calls?call=${listed}`);
    expect(search.body).not.toContain(`/dashboard/calls/${listed}`);
  });

  it("is in the agency's list under the client, marked, and on its page with its deliveries' log", async () => {
    const list = await visitors.A.get('/dashboard/calls');
    expect(list.body).toContain(`/dashboard/calls/${listed}`);
    expect(list.body).toContain(html(MARK));
    const chosen = await visitors.A.get(`/dashboard/calls?client=${tenants.A1.accountId}`);
    expect(chosen.body).toContain(`/dashboard/calls/${listed}`);
    const page = (await visitors.A.get(`/dashboard/calls/${listed}`)).body;
    expect(page).toMatch(/<dt>Client<\/dt><dd>Client One<\/dd>/);
    expect(page).toContain('Acme Agency (agency key)');
    expect(page).toContain('/dashboard/settings/api-webhooks/deliveries');
  });
});

describe('the default agent is one of the account’s own', () => {
  const SETTINGS = '/dashboard/settings/api-webhooks';

  it("offers no client's agent, and refuses one posted anyway", async () => {
    const page = await visitors.A.get(SETTINGS);
    expect(page.body).toContain(`value="${tenants.A.agentId}"`);
    expect(page.body).not.toContain(`value="${tenants.A1.agentId}"`);
    const res = await visitors.A.submit(SETTINGS, `${SETTINGS}/default-agent`, { agent_id: tenants.A1.agentId });
    expect(res.status).toBe(400);
    const account = await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenants.A.accountId } });
    expect(account.defaultAgentId).toBe(tenants.A.agentId);
  });
});
