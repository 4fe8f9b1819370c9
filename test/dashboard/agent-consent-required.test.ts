// The agent form's "Consent on record" (issue 48.4): off on a new agent, set and cleared by the form, audited as the
// user, kept by a form that does not send it, shown in words on the agent's page; a value other than on or off is
// refused by the form's schema and changes nothing; and the trigger then asks for consent.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

let app: App;
let tenant: Tenant;
let owner: Visitor;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenant = await createTenant(app.storage);
  await createUserWithPassword(app.storage, tenant.accountId, 'owner@consent.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@consent.example')).status).toBe(303);
});

/** The form's fields as a browser sends them, with consent_required when given. */
function form(name: string, consent?: string): [string, string][] {
  const pairs: [string, string][] = [
    ['name', name],
    ['phone', '+14155550160'],
    ['timezone', 'UTC'],
    ['policy', 'queue'],
    ['window_from', ''],
    ['window_to', ''],
  ];
  if (consent !== undefined) pairs.push(['consent_required', consent]);
  return pairs;
}

async function post(page: string, action: string, pairs: [string, string][]) {
  expect((await owner.get(page)).status).toBe(200);
  return owner.request('POST', action, [['_csrf', owner.lastCsrf ?? ''], ...pairs] as unknown as Record<
    string,
    string
  >);
}

const agentNamed = (name: string) => prismaOf(app).agent.findFirstOrThrow({ where: { name } });
const checked = (body: string, value: string) =>
  new RegExp(`name="consent_required" value="${value}" checked`).test(body);

describe('the agent form: consent on record', () => {
  it('a new agent: "off" is chosen; saved with on, the page shows it in words and the trigger asks for consent', async () => {
    const fresh = await owner.get('/dashboard/agents/new');
    expect(checked(fresh.body, 'off')).toBe(true);
    expect(checked(fresh.body, 'on')).toBe(false);

    const res = await post('/dashboard/agents/new', '/dashboard/agents', form('Consent agent', 'on'));
    expect(res.status).toBe(303);
    const agent = await agentNamed('Consent agent');
    expect(agent.consentRequired).toBe(true);
    const audit = await prismaOf(app).auditEntry.findFirstOrThrow({
      where: { action: 'agent_created', detail: { path: ['agent_id'], equals: agent.id } },
    });
    expect(audit.detail).toMatchObject({ consent_required: true });

    const page = await owner.get(`/dashboard/agents/${agent.id}`);
    expect(page.status).toBe(200);
    expect(checked(page.body, 'on')).toBe(true);
    expect(page.body).toContain('Consent on record');
    expect(page.body).toContain('Required: a trigger without consent is refused');

    // As a TLS-terminating proxy forwards it (the dashboard's apps run with TLS_MODE=proxy).
    const refused = await trigger(
      app,
      tenant.key,
      { phone_number: '+14155552671', agent_id: agent.id },
      { 'x-forwarded-proto': 'https' },
    );
    expect(refused.json()).toEqual({ success: false, error: 'Consent is required for this agent' });
  });

  it('an edit: off clears it (audited as agent_changed); a form without the field keeps it', async () => {
    await post('/dashboard/agents/new', '/dashboard/agents', form('Edited agent', 'on'));
    const agent = await agentNamed('Edited agent');
    const path = `/dashboard/agents/${agent.id}`;
    expect((await post(path, path, form('Edited agent'))).status).toBe(303);
    expect((await agentNamed('Edited agent')).consentRequired).toBe(true);
    expect((await post(path, path, form('Edited agent', 'off'))).status).toBe(303);
    expect((await agentNamed('Edited agent')).consentRequired).toBe(false);
    const change = await prismaOf(app).auditEntry.findFirstOrThrow({
      where: { action: 'agent_changed', detail: { path: ['agent_id'], equals: agent.id } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    expect(change.detail).toMatchObject({ consent_required: false });
    expect(change.actorKind).toBe('user');
    expect((await owner.get(path)).body).toContain('Not required by the agent (the agency');
  });

  it.each(['yes', 'ON', '1', 'on\u0007'])('refuses consent_required=%j and changes nothing', async (value) => {
    const before = await prismaOf(app).agent.count();
    const res = await post('/dashboard/agents/new', '/dashboard/agents', form(`Refused ${value}`, value));
    expect(res.status).toBe(400);
    expect(await prismaOf(app).agent.count()).toBe(before);
  });
});
