// The Agents pages: create and edit with callctl's rules and messages (phone, time zone, windows as rows, cross-midnight
// included), nothing stored on a refusal, "Set as default" used by the next trigger, the reject and queue policies as
// the API applies them, past calls readable after edits, and a client user reaching only their client's agents.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { agentInputProblem } from '../../src/admin/agents.js';
import { showCall } from '../../src/admin/calls.js';
import type { App } from '../../src/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { buildTestApp } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger as triggerWithHeaders } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

let app: App;
// A Saturday, 15:00 UTC: a weekday window is closed now and opens on Monday 09:00.
const clock = { now: new Date('2030-03-09T15:00:00.000Z') };
let agency: Tenant;
let client: Tenant;
let agencyUser: Visitor;
let clientUser: Visitor;

type Row = [days: string, from: string, to: string];
interface AgentInput {
  name: string;
  phone?: string;
  timezone?: string;
  policy?: 'queue' | 'reject';
  account?: string;
  windows?: Row[];
}

/** The agent form's fields as a browser sends them: the window rows as repeated fields, in page order. */
function agentForm(input: AgentInput): [string, string][] {
  const pairs: [string, string][] = [
    ['name', input.name],
    ['phone', input.phone ?? ''],
    ['timezone', input.timezone ?? 'UTC'],
    ['policy', input.policy ?? 'queue'],
  ];
  if (input.account) pairs.push(['account', input.account]);
  for (const [days, from, to] of [...(input.windows ?? []), ['mon-fri', '', ''] as Row])
    pairs.push(['window_days', days], ['window_from', from], ['window_to', to]);
  return pairs;
}

/** GETs `page` (for its CSRF token) and posts the pairs to `action`. */
async function post(visitor: Visitor, page: string, action: string, pairs: [string, string][]) {
  expect((await visitor.get(page)).status).toBe(200);
  return visitor.request('POST', action, [['_csrf', visitor.lastCsrf ?? ''], ...pairs] as unknown as Record<
    string,
    string
  >);
}

const createAs = (visitor: Visitor, input: AgentInput) =>
  post(visitor, '/dashboard/agents/new', '/dashboard/agents', agentForm(input));
const editAs = (visitor: Visitor, id: string, input: AgentInput) =>
  post(visitor, `/dashboard/agents/${id}`, `/dashboard/agents/${id}`, agentForm(input));

/** As Eta's autoescape writes text into the page. */
const html = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

async function agentNamed(name: string) {
  const agent = await app.prisma.agent.findFirst({ where: { name } });
  expect(agent, `agent ${name}`).not.toBeNull();
  return agent!;
}

/** The trigger as a TLS-terminating proxy forwards it (these apps run with TLS_MODE=proxy, as the dashboard's). */
const trigger = (target: App, key: string, body: unknown = { phone_number: '+14155552671' }) =>
  triggerWithHeaders(target, key, body, { 'x-forwarded-proto': 'https' });

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => clock.now }));
  agency = await createTenant(app.prisma);
  client = await createClientTenant(app.prisma, agency.accountId);
  await createUserWithPassword(app.prisma, agency.accountId, 'agency@agents.example');
  await createUserWithPassword(app.prisma, client.accountId, 'client@agents.example');
  agencyUser = new Visitor(app);
  clientUser = new Visitor(app);
  clientUser.ip = '203.0.113.8';
  expect((await agencyUser.signIn('agency@agents.example')).status).toBe(303);
  expect((await clientUser.signIn('client@agents.example')).status).toBe(303);
});

describe('agents pages', () => {
  it('creates an agent of a client with several windows, one across midnight, and lists them in words', async () => {
    const res = await createAs(agencyUser, {
      name: 'Night shift',
      phone: '+14155550199',
      timezone: 'America/New_York',
      account: client.accountId,
      windows: [
        ['mon-fri', '09:00', '17:00'],
        ['sat,sun', '22:00', '02:00'],
      ],
    });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/agents');
    const agent = await agentNamed('Night shift');
    expect(agent).toMatchObject({
      accountId: client.accountId,
      agencyId: agency.accountId,
      phoneNumber: '+14155550199',
      timezone: 'America/New_York',
      outsideWindowPolicy: 'queue',
      callingWindows: [
        { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
        { days: [6, 7], start: '22:00', end: '02:00' },
      ],
    });
    const audit = await app.prisma.auditEntry.findFirst({
      where: { action: 'agent_created', accountId: client.accountId },
    });
    expect(audit).toMatchObject({ actorKind: 'user', ip: '203.0.113.7' });
    expect(audit!.detail).toMatchObject({
      agent_id: agent.id,
      calling_windows: ['mon-fri 09:00-17:00', 'sat,sun 22:00-02:00'],
    });

    const list = await agencyUser.get('/dashboard/agents');
    expect(list.body).toContain('Agent Night shift created.');
    expect(list.body).toContain('mon-fri 09:00-17:00');
    expect(list.body).toContain('sat,sun 22:00-02:00 (into the next day)');
    expect(list.body).toContain('America/New_York');
    expect(list.body).toContain('Test Client <small>(client)</small>');
    expect(list.body).toContain('Queue until the window opens');
  });

  it('offers an agency user the agency and its clients as owners, and a client user no choice', async () => {
    const other = await createAgency(app.prisma, { name: 'Elsewhere Agency' });
    await createClient(app.prisma, { agencyId: other.id, name: 'Elsewhere Client' });
    const agencyForm = (await agencyUser.get('/dashboard/agents/new')).body;
    expect(agencyForm).toContain(`<option value="${agency.accountId}" selected>Test Agency (agency)</option>`);
    expect(agencyForm).toContain(`<option value="${client.accountId}">Test Client (client)</option>`);
    expect(agencyForm).not.toContain('Elsewhere');
    expect(agencyForm).toContain('<option>Europe/Berlin</option>');
    expect(agencyForm).toContain('<option selected>UTC</option>');
    const clientForm = (await clientUser.get('/dashboard/agents/new')).body;
    expect(clientForm).not.toContain('name="account"');
  });

  it("refuses a bad phone number, time zone or window with callctl's message, keeps what was typed and stores nothing", async () => {
    const cases: { input: AgentInput; message: string }[] = [
      {
        input: { name: 'Bad phone', phone: '+1 415 555 0100' },
        message: agentInputProblem({ phone: '+1 415 555 0100' })!,
      },
      {
        input: { name: 'Bad zone', timezone: 'Mars/Olympus' },
        message: agentInputProblem({ timezone: 'Mars/Olympus' })!,
      },
      {
        input: { name: 'Bad time', windows: [['mon-fri', '9:00', '17:00']] },
        message: agentInputProblem({ windows: ['mon-fri 9:00-17:00'] })!,
      },
      {
        input: { name: 'Empty window', windows: [['daily', '10:00', '10:00']] },
        message: agentInputProblem({ windows: ['daily 10:00-10:00'] })!,
      },
      {
        input: { name: 'No end', windows: [['sat,sun', '10:00', '']] },
        message: agentInputProblem({ windows: ['sat,sun 10:00-'] })!,
      },
      {
        input: {
          name: 'Late',
          windows: [
            ['mon-fri', '09:00', '17:00'],
            ['daily', '25:00', '02:00'],
          ],
        },
        message: agentInputProblem({ windows: ['daily 25:00-02:00'] })!,
      },
      { input: { name: '   ' }, message: 'An agent needs a name' },
    ];
    const before = await app.prisma.agent.count();
    const audits = await app.prisma.auditEntry.count();
    for (const { input, message } of cases) {
      expect(message, input.name).toMatch(/\S/);
      const res = await createAs(agencyUser, input);
      expect(res.status, input.name).toBe(400);
      expect(res.body, input.name).toContain(`<p class="notice error" role="alert">${html(message)}</p>`);
      expect(res.body, input.name).toContain(`value="${html(input.phone ?? '')}"`);
    }
    expect(await app.prisma.agent.count()).toBe(before);
    expect(await app.prisma.auditEntry.count()).toBe(audits);
  });

  it('edits an agent in use: its past call keeps its agent and caller ID and stays readable; only what changed is audited', async () => {
    const callId = callIdOf(await trigger(app, agency.key));
    await applyCallUpdate(app.prisma, callId, { kind: 'dialing' }, { now: clock.now, source: 'dispatcher' });
    await applyCallUpdate(
      app.prisma,
      callId,
      { kind: 'completed', durationSeconds: 30 },
      { now: clock.now, source: 'provider' },
    );

    const res = await editAs(agencyUser, agency.agentId, {
      name: 'Renamed agent',
      phone: '+14155550177',
      timezone: 'Europe/Berlin',
      policy: 'queue',
      windows: [['daily', '00:00', '24:00']],
    });
    expect(res.status).toBe(303);
    const agent = await app.prisma.agent.findUniqueOrThrow({ where: { id: agency.agentId } });
    expect(agent).toMatchObject({
      name: 'Renamed agent',
      phoneNumber: '+14155550177',
      timezone: 'Europe/Berlin',
      accountId: agency.accountId,
    });

    const { call } = await showCall(app.prisma, callId);
    expect(call).toMatchObject({
      call_id: callId,
      agent_id: agency.agentId,
      from_number: '+14155550100',
      status: 'completed',
      duration_seconds: 30,
    });
    const audit = await app.prisma.auditEntry.findFirst({
      where: { action: 'agent_changed', accountId: agency.accountId },
      orderBy: { createdAt: 'desc' },
    });
    expect(audit!.detail).toEqual({
      agent_id: agency.agentId,
      name: 'Renamed agent',
      phone_number: '+14155550177',
      timezone: 'Europe/Berlin',
      calling_windows: ['daily 00:00-24:00'],
    });

    const page = await agencyUser.get(`/dashboard/agents/${agency.agentId}`);
    expect(page.body).toContain('value="Renamed agent"');
    expect(page.body).toContain('<option selected>Europe/Berlin</option>');
    expect(page.body).toContain('<option selected>daily</option>');
    expect(page.body).toContain('value="24:00"');

    // The same form again changes nothing and records nothing.
    const entries = await app.prisma.auditEntry.count();
    const again = await editAs(agencyUser, agency.agentId, {
      name: 'Renamed agent',
      phone: '+14155550177',
      timezone: 'Europe/Berlin',
      windows: [['daily', '00:00', '24:00']],
    });
    expect(again.status).toBe(303);
    expect((await agencyUser.get('/dashboard/agents')).body).toContain('Nothing changed.');
    expect(await app.prisma.auditEntry.count()).toBe(entries);
  });

  it('sets an agent as the default, and a trigger without agent_id then uses it', async () => {
    expect((await createAs(agencyUser, { name: 'Second voice', phone: '+14155550155' })).status).toBe(303);
    const second = await agentNamed('Second voice');
    const res = await post(agencyUser, '/dashboard/agents', `/dashboard/agents/${second.id}/default`, []);
    expect(res.status).toBe(303);
    const list = (await agencyUser.get('/dashboard/agents')).body;
    expect(list).toContain('Second voice is now the default agent of Test Agency.');
    const row = list.split('<tr>').find((r) => r.includes('>Second voice</a>'))!;
    expect(row).toContain('<strong class="default">Default</strong>');

    const answer = await trigger(app, agency.key);
    expect(answer.statusCode).toBe(200);
    const call = await app.prisma.call.findUniqueOrThrow({ where: { id: callIdOf(answer) } });
    expect(call.agentId).toBe(second.id);
    expect(call.fromNumber).toBe('+14155550155');
    expect(
      await app.prisma.auditEntry.count({
        where: { action: 'default_agent_changed', accountId: agency.accountId, actorKind: 'user' },
      }),
    ).toBe(1);
  });

  it("rejects a trigger outside a reject agent's window; switched to queue, the call waits and the overview counts it", async () => {
    const tenant = await createTenant(app.prisma);
    await createUserWithPassword(app.prisma, tenant.accountId, 'windows@agents.example');
    const visitor = new Visitor(app);
    visitor.ip = '203.0.113.9';
    await visitor.signIn('windows@agents.example');
    const weekdays: AgentInput = {
      name: 'Weekdays only',
      phone: '+14155550166',
      policy: 'reject',
      windows: [['mon-fri', '09:00', '17:00']],
    };
    expect((await createAs(visitor, weekdays)).status).toBe(303);
    const agent = await agentNamed('Weekdays only');
    expect((await post(visitor, '/dashboard/agents', `/dashboard/agents/${agent.id}/default`, [])).status).toBe(303);

    const refused = await trigger(app, tenant.key);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ success: false, error: "Outside the agent's calling window" });
    expect(await app.prisma.call.count({ where: { accountId: tenant.accountId } })).toBe(0);

    expect((await editAs(visitor, agent.id, { ...weekdays, policy: 'queue' })).status).toBe(303);
    const accepted = await trigger(app, tenant.key);
    expect(accepted.statusCode).toBe(200);
    const call = await app.prisma.call.findUniqueOrThrow({ where: { id: callIdOf(accepted) } });
    expect(call.status).toBe('initiated');
    expect(call.notBefore.toISOString()).toBe('2030-03-11T09:00:00.000Z');

    const overview = (await visitor.get('/dashboard')).body;
    const row = overview.split('<tr>').find((r) => r.includes('<th scope="row">Test Agency'))!;
    const cells = [...row.matchAll(/<td>([^<]*)/g)].map((m) => m[1]!.trim());
    expect(cells.slice(0, 3)).toEqual(['0 of 10', '1', '1']);
  });

  it('hands calls waiting for an old window back to the dispatcher when the windows change', async () => {
    const tenant = await createTenant(app.prisma, { windows: ['mon-fri 09:00-17:00'], outsideWindow: 'queue' });
    const callId = callIdOf(await trigger(app, tenant.key));
    expect((await app.prisma.call.findUniqueOrThrow({ where: { id: callId } })).notBefore.toISOString()).toBe(
      '2030-03-11T09:00:00.000Z',
    );
    expect(
      (
        await editAs(agencyUser, agency.agentId, {
          name: 'Renamed agent',
          phone: '+14155550177',
          timezone: 'Europe/Berlin',
          windows: [['daily', '00:00', '23:00']],
        })
      ).status,
    ).toBe(303);
    // Another agent's edit leaves this call as it was.
    expect((await app.prisma.call.findUniqueOrThrow({ where: { id: callId } })).notBefore.toISOString()).toBe(
      '2030-03-11T09:00:00.000Z',
    );
    await createUserWithPassword(app.prisma, tenant.accountId, 'waiting@agents.example');
    const visitor = new Visitor(app);
    visitor.ip = '203.0.113.10';
    await visitor.signIn('waiting@agents.example');
    expect(
      (
        await editAs(visitor, tenant.agentId, {
          name: 'Test Agent',
          phone: '+14155550100',
          windows: [['sat,sun', '10:00', '18:00']],
        })
      ).status,
    ).toBe(303);
    expect((await app.prisma.call.findUniqueOrThrow({ where: { id: callId } })).notBefore).toEqual(clock.now);
  });

  it('shows names with markup, quotes and Unicode as text', async () => {
    const name = `<script>alert("x")</script> O'Brien Zoë 📞`;
    expect((await createAs(agencyUser, { name, phone: '+14155550144' })).status).toBe(303);
    const agent = await agentNamed(name);
    const list = (await agencyUser.get('/dashboard/agents')).body;
    expect(list).toContain(`>${html(name)}</a>`);
    expect(list).toContain(html(`Agent ${name} created.`));
    expect(list).not.toContain('<script>');
    const form = (await agencyUser.get(`/dashboard/agents/${agent.id}`)).body;
    expect(form).toContain(`value="${html(name)}"`);
    expect(form).toContain(`<title>${html(`Agent: ${name}`)} · Outbound calls</title>`);
    expect(form).not.toContain('<script>');
  });

  it("shows a client user only their client's agents, and answers 404 for the agency's", async () => {
    const list = (await clientUser.get('/dashboard/agents')).body;
    expect(list).toContain('Night shift');
    expect(list).not.toContain('Second voice');
    expect(list).not.toContain('<th scope="col">Account</th>');

    const agencyAgent = await agentNamed('Second voice');
    const before = await app.prisma.agent.findUniqueOrThrow({ where: { id: agencyAgent.id } });
    expect((await clientUser.get(`/dashboard/agents/${agencyAgent.id}`)).status).toBe(404);
    const edit = await post(
      clientUser,
      '/dashboard/agents/new',
      `/dashboard/agents/${agencyAgent.id}`,
      agentForm({ name: 'Taken over', phone: '+14155550100' }),
    );
    expect(edit.status).toBe(404);
    expect(
      (await post(clientUser, '/dashboard/agents', `/dashboard/agents/${agencyAgent.id}/default`, [])).status,
    ).toBe(404);
    expect((await createAs(clientUser, { name: 'Into the agency', account: agency.accountId })).status).toBe(404);
    expect(await app.prisma.agent.findUniqueOrThrow({ where: { id: agencyAgent.id } })).toEqual(before);
    expect(await app.prisma.agent.count({ where: { name: 'Into the agency' } })).toBe(0);
    expect((await clientUser.get('/dashboard/agents/not-an-id')).status).toBe(404);

    // Their own: created under their client whatever the form says of an owner, edited, set as default.
    expect((await createAs(clientUser, { name: 'Client voice', phone: '+14155550188' })).status).toBe(303);
    const own = await agentNamed('Client voice');
    expect(own.accountId).toBe(client.accountId);
    expect((await post(clientUser, '/dashboard/agents', `/dashboard/agents/${own.id}/default`, [])).status).toBe(303);
    expect((await app.prisma.account.findUniqueOrThrow({ where: { id: client.accountId } })).defaultAgentId).toBe(
      own.id,
    );
  });
});
