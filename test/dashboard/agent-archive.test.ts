// Archiving an agent (issue 24, point 4): from the agent's page and with callctl, audited both ways; a trigger naming an
// archived agent gets 400 "Agent not found" and stores nothing; an archived agent cannot be (or stop being) a default
// agent; its old calls still show it; the Agents list shows it under "Archived" until it is restored.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ARCHIVED_DEFAULT,
  DEFAULT_NOT_ARCHIVED,
  createAgent,
  setAgentArchived,
  setDefaultAgent,
} from '../../src/admin/agents.js';
import { AdminError } from '../../src/admin/errors.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl } from '../helpers/cli.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger as triggerWithHeaders } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

let app: App;
let databaseUrl: string;
let tenant: Tenant;
let owner: Visitor;

const trigger = (body: unknown) => triggerWithHeaders(app, tenant.key, body, { 'x-forwarded-proto': 'https' });
const counts = async () => ({
  calls: await prismaOf(app).call.count(),
  events: await prismaOf(app).callEvent.count(),
});

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenant = await createTenant(app.storage);
  await createUserWithPassword(app.storage, tenant.accountId, 'owner@archive.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@archive.example')).status).toBe(303);
});

describe('archiving an agent', () => {
  it('archives from the page: triggers get 400 Agent not found, old calls keep its name, the list shows it archived', async () => {
    const { id } = await createAgent(app.storage, {
      accountId: tenant.accountId,
      name: 'Summer campaign',
      phone: '+14155550123',
      now: app.now(),
    });
    const old = callIdOf(await trigger({ phone_number: '+14155552671', agent_id: id }));

    const page = await owner.get(`/dashboard/agents/${id}`);
    expect(page.body).toContain('<button type="submit" class="button danger">Archive this agent</button>');
    expect(page.body).toContain('a trigger naming it gets 400 "Agent not found"');
    const archived = await owner.submit(`/dashboard/agents/${id}`, `/dashboard/agents/${id}/archive`);
    expect(archived.status).toBe(303);
    expect(archived.location).toBe('/dashboard/agents');
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id } })).archivedAt).toBeInstanceOf(Date);
    const audit = await prismaOf(app).auditEntry.findFirst({ where: { action: 'agent_archived' } });
    expect(audit).toMatchObject({ accountId: tenant.accountId, actorKind: 'user' });
    expect(audit!.detail).toEqual({ agent_id: id, agent_name: 'Summer campaign' });

    // The list: not among the agents in use, in the Archived section with a Restore button.
    const list = (await owner.get('/dashboard/agents')).body;
    expect(list).toContain(
      `Agent Summer campaign archived: new triggers naming it get 400 &quot;Agent not found&quot;.`,
    );
    const [inUse, archivedSection] = list.split('<h2 id="archived-heading">Archived</h2>');
    expect(inUse).not.toContain(`/dashboard/agents/${id}"`);
    expect(archivedSection).toContain(`<a href="/dashboard/agents/${id}">Summer campaign</a>`);
    expect(archivedSection).toContain('<span class="badge" data-tone="muted">Archived</span>');
    expect(archivedSection).toContain(`action="/dashboard/agents/${id}/restore"`);

    // A new trigger naming it: the error table's 400, nothing stored.
    const before = await counts();
    const refused = await trigger({ phone_number: '+14155552671', agent_id: id });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ success: false, error: 'Agent not found' });
    expect(await counts()).toEqual(before);

    // Its old call still shows it, on the call's page and in the Calls list.
    expect((await owner.get(`/dashboard/calls/${old}`)).body).toContain('<dd>Summer campaign');
    expect((await owner.get('/dashboard/calls')).body).toContain('Summer campaign');

    // Its page says so, offers Restore, and no longer "Set as default" or "Archive".
    const archivedPage = (await owner.get(`/dashboard/agents/${id}`)).body;
    expect(archivedPage).toContain('a new trigger naming this agent gets 400 "Agent not found"');
    expect(archivedPage).toContain('Restore this agent</button>');
    expect(archivedPage).not.toContain('Archive this agent');
    expect(archivedPage).not.toContain('Set as default');

    // Restored: usable again, audited.
    const restored = await owner.submit(`/dashboard/agents/${id}`, `/dashboard/agents/${id}/restore`);
    expect(restored.status).toBe(303);
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id } })).archivedAt).toBeNull();
    expect(await prismaOf(app).auditEntry.count({ where: { action: 'agent_restored' } })).toBe(1);
    expect((await trigger({ phone_number: '+14155552671', agent_id: id })).statusCode).toBe(200);
    expect((await owner.get('/dashboard/agents')).body).not.toContain('<h2 id="archived-heading">');
  });

  it('refuses to archive a default agent, and to make an archived agent the default', async () => {
    // The tenant's agent is its account's default.
    const res = await owner.submit(
      `/dashboard/agents/${tenant.agentId}`,
      `/dashboard/agents/${tenant.agentId}/archive`,
    );
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/agents/${tenant.agentId}`);
    const page = (await owner.get(`/dashboard/agents/${tenant.agentId}`)).body;
    expect(page).toContain(
      `Test Agent is the default agent of Test Agency: make another agent the default first, then archive it`,
    );
    expect(page).toContain('make another agent the default before archiving it');
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id: tenant.agentId } })).archivedAt).toBeNull();
    expect(DEFAULT_NOT_ARCHIVED('Test Agent', ['Test Agency'])).toMatch(/^Test Agent is the default agent/);
    // A trigger without agent_id still works.
    expect((await trigger({ phone_number: '+14155552671' })).statusCode).toBe(200);

    const { id } = await createAgent(app.storage, {
      accountId: tenant.accountId,
      name: 'Old line',
      phone: '+14155550124',
      now: app.now(),
    });
    await owner.submit(`/dashboard/agents/${id}`, `/dashboard/agents/${id}/archive`);
    await expect(setDefaultAgent(app.storage, tenant.accountId, id, undefined, app.now())).rejects.toThrow(
      new AdminError(ARCHIVED_DEFAULT('Old line')),
    );
    // The settings page's default-agent menu does not offer it; posted by hand, it is refused.
    const settings = (await owner.get('/dashboard/settings/api-webhooks')).body;
    expect(settings).toContain(`value="${tenant.agentId}"`);
    expect(settings).not.toContain(`value="${id}"`);
    const chosen = await owner.submit(
      '/dashboard/settings/api-webhooks',
      '/dashboard/settings/api-webhooks/default-agent',
      {
        agent_id: id,
      },
    );
    // The settings page's menu refuses it as an agent the account cannot use.
    expect(chosen.status).toBe(400);
    const account = await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenant.accountId } });
    expect(account.defaultAgentId).toBe(tenant.agentId);
  });

  it('never leaves an archived agent as a default when an archive and a "set as default" race', async () => {
    const other = await createTenant(app.storage);
    for (let round = 0; round < 8; round++) {
      const { id } = await createAgent(app.storage, {
        accountId: other.accountId,
        name: `Racer ${round}`,
        phone: '+14155550125',
        now: app.now(),
      });
      const outcomes = await Promise.allSettled([
        setAgentArchived(app.storage, id, true, undefined, app.now()),
        setDefaultAgent(app.storage, other.accountId, id, undefined, app.now()),
      ]);
      // Exactly one of the two wins: the other sees it done and refuses.
      expect(
        outcomes.filter((o) => o.status === 'fulfilled'),
        `round ${round}`,
      ).toHaveLength(1);
      const agent = await prismaOf(app).agent.findUniqueOrThrow({ where: { id } });
      const account = await prismaOf(app).account.findUniqueOrThrow({ where: { id: other.accountId } });
      expect(agent.archivedAt !== null && account.defaultAgentId === id, `round ${round}`).toBe(false);
      // Leave the account's own agent as its default for the next round.
      if (account.defaultAgentId === id)
        await setDefaultAgent(app.storage, other.accountId, other.agentId, undefined, app.now());
    }
  });

  it('archives and restores with callctl, audited as the operator; another tenant gets 404 from the page', async () => {
    const { id } = await createAgent(app.storage, { accountId: tenant.accountId, name: 'Night line', now: app.now() });
    const archived = await callctl(databaseUrl, ['agent', 'archive', id, '--json']);
    expect(archived.stderr).toBe('');
    expect(archived.json()).toEqual({ agent_id: id, archived: true, changed: true });
    expect((await callctl(databaseUrl, ['agent', 'archive', id, '--json'])).json()).toEqual({
      agent_id: id,
      archived: true,
      changed: false,
    });
    expect((await trigger({ phone_number: '+14155552671', agent_id: id })).json()).toEqual({
      success: false,
      error: 'Agent not found',
    });
    expect((await callctl(databaseUrl, ['agent', 'restore', id, '--json'])).json()).toEqual({
      agent_id: id,
      archived: false,
      changed: true,
    });
    const entries = await prismaOf(app).auditEntry.findMany({
      where: { action: { in: ['agent_archived', 'agent_restored'] }, actorKind: 'operator' },
      orderBy: { createdAt: 'asc' },
    });
    expect(entries.map((e) => e.action)).toEqual(['agent_archived', 'agent_restored']);
    const refused = await callctl(databaseUrl, ['agent', 'archive', tenant.agentId, '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is the default agent of Test Agency');

    const stranger = await createTenant(app.storage);
    await createUserWithPassword(app.storage, stranger.accountId, 'stranger@archive.example');
    const other = new Visitor(app);
    other.ip = '203.0.113.9';
    expect((await other.signIn('stranger@archive.example')).status).toBe(303);
    const page = await other.get('/dashboard/agents');
    expect(page.status).toBe(200);
    const res = await other.request('POST', `/dashboard/agents/${id}/archive`, { _csrf: other.lastCsrf ?? '' });
    expect(res.status).toBe(404);
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id } })).archivedAt).toBeNull();
  });
});
