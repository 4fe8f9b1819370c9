// The Agents pages: create and edit with callctl's rules and messages (phone, time zone, windows as rows, cross-midnight
// included), nothing stored on a refusal, "Set as default" used by the next trigger, the reject and queue policies as
// the API applies them, past calls readable after edits, and a client user reaching only their client's agents.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient, OPERATOR } from '../../src/admin/accounts.js';
import { agentInputProblem } from '../../src/admin/agents.js';
import { parseCallingWindow } from '../../src/domain/calling-window.js';
import { DAY_NAMES } from '../../schemas/calling-window.js';
import { showCall } from '../../src/admin/calls.js';
import type { App } from '../../src/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger as triggerWithHeaders } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor, html } from './helpers.js';
import { forceCall } from '../helpers/seed.js';

let app: App;
// A Saturday, 15:00 UTC: a weekday window is closed now and opens on Monday 09:00.
const clock = { now: new Date('2058-03-09T15:00:00.000Z') };
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
  windowTimezone?: string;
  maxAttempts?: string;
  retryOn?: string[];
  retryWaits?: string;
  voicemail?: string;
  voicemailMessage?: string;
}

/** The days of callctl's day words ("mon-fri", "sat,sun", "daily") as the form's boxes name them. */
function daysOf(words: string): string[] {
  if (!words) return [];
  return parseCallingWindow(`${words} 10:00-11:00`).days.map((d) => DAY_NAMES[d - 1]!);
}

/** Each field's problem as the page shows it, by the field's id: the words in the <p> after the field. */
function fieldErrors(body: string): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const m of body.matchAll(/<p class="field-error" id="f-([\w-]+)-error">([^<]*)<\/p>/g)) errors[m[1]!] = m[2]!;
  return errors;
}

/** The page shows `words` next to field `key`, and the field says it is invalid and points at them. */
function expectFieldError(body: string, key: string, words: string) {
  expect(fieldErrors(body)[key], key).toBe(html(words));
  expect(body, key).toMatch(new RegExp(`id="f-${key}"[^>]*aria-invalid="true" aria-describedby="f-${key}-error`));
}

const FIELDS_PROBLEM = 'Some fields need a change: each says what is wrong next to it.';

/** The agent form's fields as a browser sends them: the window rows as repeated fields, in page order. */
function agentForm(input: AgentInput): [string, string][] {
  const pairs: [string, string][] = [
    ['name', input.name],
    ['phone', input.phone ?? ''],
    ['timezone', input.timezone ?? 'UTC'],
    ['policy', input.policy ?? 'queue'],
  ];
  if (input.account) pairs.push(['account', input.account]);
  // Each row's days as its ticked boxes ("mon-fri": five boxes), its times as typed; then the empty row a page has.
  [...(input.windows ?? []), ['', '', ''] as Row].forEach(([days, from, to], row) => {
    for (const day of daysOf(days)) pairs.push(['window_day', `${row}:${day}`]);
    pairs.push(['window_from', from], ['window_to', to]);
  });
  // The settings the page always sends, when the test gives them (a form without them keeps the agent's).
  if (input.windowTimezone !== undefined) pairs.push(['window_timezone', input.windowTimezone]);
  if (input.maxAttempts !== undefined) pairs.push(['max_attempts', input.maxAttempts]);
  for (const outcome of input.retryOn ?? []) pairs.push(['retry_on', outcome]);
  if (input.retryWaits !== undefined) pairs.push(['retry_waits_minutes', input.retryWaits]);
  if (input.voicemail !== undefined) pairs.push(['voicemail', input.voicemail]);
  if (input.voicemailMessage !== undefined) pairs.push(['voicemail_message', input.voicemailMessage]);
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

async function agentNamed(name: string) {
  const agent = await prismaOf(app).agent.findFirst({ where: { name } });
  expect(agent, `agent ${name}`).not.toBeNull();
  return agent!;
}

/** The trigger as a TLS-terminating proxy forwards it (these apps run with TLS_MODE=proxy, as the dashboard's). */
const trigger = (target: App, key: string, body: unknown = { phone_number: '+14155552671' }) =>
  triggerWithHeaders(target, key, body, { 'x-forwarded-proto': 'https' });

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => clock.now }));
  agency = await createTenant(app.storage);
  client = await createClientTenant(app.storage, agency.accountId);
  await createUserWithPassword(app.storage, agency.accountId, 'agency@agents.example');
  await createUserWithPassword(app.storage, client.accountId, 'client@agents.example');
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
    const audit = await prismaOf(app).auditEntry.findFirst({
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
    const other = await createAgency(app.storage, { name: 'Elsewhere Agency' });
    await createClient(app.storage, { agencyId: other.id, name: 'Elsewhere Client', now: app.now() });
    const agencyForm = (await agencyUser.get('/dashboard/agents/new')).body;
    expect(agencyForm).toContain(`<option value="${agency.accountId}" selected>Test Agency (agency)</option>`);
    expect(agencyForm).toContain(`<option value="${client.accountId}">Test Client (client)</option>`);
    expect(agencyForm).not.toContain('Elsewhere');
    expect(agencyForm).toMatch(
      /<option value="Europe\/Berlin"( data-aliases="[^"]*")?>Berlin \(Europe\/Berlin\)<\/option>/,
    );
    expect(agencyForm).toMatch(
      /<option value="UTC" data-aliases="[^"]*" selected>UTC \(Coordinated Universal Time\)<\/option>/,
    );
    const clientForm = (await clientUser.get('/dashboard/agents/new')).body;
    expect(clientForm).not.toContain('name="account"');
  });

  it('refuses a bad phone number, time zone or window in plain words next to the field, keeps what was typed, stores nothing', async () => {
    const cases: { input: AgentInput; key: string; words: string }[] = [
      {
        input: { name: 'Bad phone', phone: '+1 415 555 0100 ext 7' },
        key: 'phone',
        words:
          'Write the number in digits, with spaces, brackets, dots or dashes if you like, such as +1 415 555 2671: ' +
          'no letters, no extension.',
      },
      {
        input: { name: 'Short phone', phone: '+1415555' },
        key: 'phone',
        words:
          'This is not a possible number: check the country code and the digits (a number without a country code ' +
          'is read as one of United States (+1)).',
      },
      {
        input: { name: 'Bad zone', timezone: 'Mars/Olympus' },
        key: 'timezone',
        words: 'Choose a time zone from the list.',
      },
      {
        input: { name: 'Bad time', windows: [['mon-fri', '9:00', '17:00']] },
        key: 'w0-from',
        words: 'Enter the opening time as hours and minutes, such as 09:00.',
      },
      {
        input: { name: 'Empty window', windows: [['daily', '10:00', '10:00']] },
        key: 'w0-to',
        words: 'This window would close the moment it opens: choose another closing time.',
      },
      {
        input: { name: 'No end', windows: [['sat,sun', '10:00', '']] },
        key: 'w0-to',
        words: 'Enter the time this window closes, such as 17:00.',
      },
      {
        input: { name: 'No days', windows: [['', '10:00', '12:00']] },
        key: 'w0-days',
        words: 'Tick at least one day on which this window is open.',
      },
      {
        input: {
          name: 'Late',
          windows: [
            ['mon-fri', '09:00', '17:00'],
            ['daily', '25:00', '02:00'],
          ],
        },
        key: 'w1-from',
        words: 'Enter the opening time as hours and minutes, such as 09:00.',
      },
      { input: { name: '   ' }, key: 'name', words: 'Give the agent a name.' },
    ];
    const before = await prismaOf(app).agent.count();
    const audits = await prismaOf(app).auditEntry.count();
    for (const { input, key, words } of cases) {
      const res = await createAs(agencyUser, input);
      expect(res.status, input.name).toBe(400);
      expect(res.body, input.name).toContain(`<p class="notice error" role="alert">${FIELDS_PROBLEM}</p>`);
      expectFieldError(res.body, key, words);
      expect(Object.keys(fieldErrors(res.body)), input.name).toEqual([key]);
      expect(res.body, input.name).toContain(`value="${html(input.phone ?? '')}"`);
      // No CLI wording: no day tokens, no callctl syntax.
      expect(res.body, input.name).not.toMatch(/Invalid calling window|mon-fri|--window/);
    }
    expect(await prismaOf(app).agent.count()).toBe(before);
    expect(await prismaOf(app).auditEntry.count()).toBe(audits);
  });

  it('shows every problem at once, each next to its field with aria-invalid and aria-describedby, and keeps the values', async () => {
    const input: AgentInput = {
      name: '',
      phone: '+1 415 555 0100 ext 7',
      timezone: '   ',
      windows: [
        ['mon-fri', '9:00', '17:00'],
        ['daily', '09:00', '17:00'],
        ['', '10:00', '11:00'],
        ['sat', '10:00', '24:01'],
      ],
      maxAttempts: '3',
      retryOn: [],
      voicemail: 'leave_message',
      voicemailMessage: '',
    };
    const before = await prismaOf(app).agent.count();
    const res = await createAs(agencyUser, input);
    expect(res.status).toBe(400);
    const errors = fieldErrors(res.body);
    expect(Object.keys(errors).sort()).toEqual(
      ['name', 'phone', 'timezone', 'w0-from', 'w2-days', 'w3-to', 'retry_on', 'voicemail_message'].sort(),
    );
    expectFieldError(res.body, 'name', 'Give the agent a name.');
    expectFieldError(res.body, 'timezone', 'Choose a time zone from the list.');
    expectFieldError(res.body, 'w3-to', 'Enter the closing time as hours and minutes, such as 17:00.');
    expectFieldError(
      res.body,
      'retry_on',
      'Trying up to 3 times needs a reason to try again: tick busy, no answer or voicemail (or try once).',
    );
    expectFieldError(
      res.body,
      'voicemail_message',
      'Write the message to leave on a machine, or choose another answer above.',
    );
    // The day boxes of the row without days are marked too; a row without problems is not.
    expect(res.body).toContain('<input type="checkbox" name="window_day" value="2:mon" aria-invalid="true"');
    expect(res.body).toMatch(/id="f-w1-from" name="window_from" value="09:00">/);
    // What was typed stays on the form, row by row.
    expect(res.body).toContain(`value="${html('+1 415 555 0100 ext 7')}"`);
    expect(res.body).toContain('value="9:00"');
    expect(res.body).toContain('value="24:01"');
    expect(res.body).toContain('<input type="checkbox" name="window_day" value="3:sat" checked');
    expect(res.body).toContain('<input type="checkbox" name="window_day" value="0:fri" checked');
    expect(res.body).not.toContain('value="0:sat" checked');
    expect(await prismaOf(app).agent.count()).toBe(before);
  });

  it('refuses a time that is not HH:MM on an edit in plain words, and changes nothing', async () => {
    const stored = await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agency.agentId } });
    for (const [from, to, key] of [
      ['24:00', '02:00', 'w0-from'],
      ['08:00', '7:30', 'w0-to'],
      ['08:60', '09:00', 'w0-from'],
    ] as const) {
      const res = await editAs(agencyUser, agency.agentId, {
        name: 'Never saved',
        phone: '+14155550177',
        windows: [['mon-fri', from, to]],
      });
      expect(res.status, from).toBe(400);
      expect(Object.keys(fieldErrors(res.body)), from).toEqual([key]);
      expect(fieldErrors(res.body)[key], from).toMatch(/^Enter the (opening|closing) time as hours and minutes/);
      expect(res.body, from).toContain('value="Never saved"');
    }
    expect(await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agency.agentId } })).toEqual(stored);
  });

  it('answers 404 for an account that is no id, and keeps the generic words for a form no page sends', async () => {
    const before = await prismaOf(app).agent.count();
    expect((await createAs(agencyUser, { name: 'Nowhere', account: 'not-an-id' })).status).toBe(404);
    // A choice outside the list (and a phone refused beside it): the form cannot be read, as before.
    const odd = await post(agencyUser, '/dashboard/agents/new', '/dashboard/agents', [
      ...agentForm({ name: 'Odd', phone: 'x' }).filter(([field]) => field !== 'policy'),
      ['policy', 'sometimes'],
    ]);
    expect(odd.status).toBe(400);
    expect(odd.body).toContain('The form was not filled in as expected. Reload the page and try again.');
    expect(await prismaOf(app).agent.count()).toBe(before);
  });

  it('edits an agent in use: its past call keeps its agent and caller ID and stays readable; only what changed is audited', async () => {
    const callId = callIdOf(await trigger(app, agency.key));
    await applyCallUpdate(app.storage, callId, { kind: 'dialing' }, { now: clock.now, source: 'dispatcher' });
    await applyCallUpdate(
      app.storage,
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
    const agent = await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agency.agentId } });
    expect(agent).toMatchObject({
      name: 'Renamed agent',
      phoneNumber: '+14155550177',
      timezone: 'Europe/Berlin',
      accountId: agency.accountId,
    });

    const { call } = await showCall(app.storage, callId, OPERATOR);
    expect(call).toMatchObject({
      call_id: callId,
      agent_id: agency.agentId,
      from_number: '+14155550100',
      status: 'completed',
      duration_seconds: 30,
    });
    const audit = await prismaOf(app).auditEntry.findFirst({
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
    expect(page.body).toMatch(
      /<option value="Europe\/Berlin"( data-aliases="[^"]*")? selected>Berlin \(Europe\/Berlin\)<\/option>/,
    );
    for (const day of DAY_NAMES) expect(page.body).toContain(`value="0:${day}" checked`);
    // A time input cannot say 24:00: until midnight shows as 00:00, which the form reads back as 24:00.
    expect(page.body).toContain('id="f-w0-to" name="window_to" value="00:00"');

    // The same form again changes nothing and records nothing.
    const entries = await prismaOf(app).auditEntry.count();
    const again = await editAs(agencyUser, agency.agentId, {
      name: 'Renamed agent',
      phone: '+14155550177',
      timezone: 'Europe/Berlin',
      windows: [['daily', '00:00', '24:00']],
    });
    expect(again.status).toBe(303);
    expect((await agencyUser.get('/dashboard/agents')).body).toContain('Nothing changed.');
    expect(await prismaOf(app).auditEntry.count()).toBe(entries);
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
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(answer) } });
    expect(call.agentId).toBe(second.id);
    expect(call.fromNumber).toBe('+14155550155');
    expect(
      await prismaOf(app).auditEntry.count({
        where: { action: 'default_agent_changed', accountId: agency.accountId, actorKind: 'user' },
      }),
    ).toBe(1);
  });

  it("rejects a trigger outside a reject agent's window; switched to queue, the call waits and the overview counts it", async () => {
    const tenant = await createTenant(app.storage);
    await createUserWithPassword(app.storage, tenant.accountId, 'windows@agents.example');
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
    expect(await prismaOf(app).call.count({ where: { accountId: tenant.accountId } })).toBe(0);

    expect((await editAs(visitor, agent.id, { ...weekdays, policy: 'queue' })).status).toBe(303);
    const accepted = await trigger(app, tenant.key);
    expect(accepted.statusCode).toBe(200);
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(accepted) } });
    expect(call.status).toBe('initiated');
    expect(call.notBefore.toISOString()).toBe('2058-03-11T09:00:00.000Z');

    const overview = (await visitor.get('/dashboard')).body;
    const row = overview.split('<tr>').find((r) => r.includes('data-label="Account">Test Agency'))!;
    const cells = [...row.matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
    expect(cells.slice(0, 3)).toEqual(['0 of 10', '1', '1']);
  });

  it('hands calls waiting for an old window back to the dispatcher when the windows change', async () => {
    const tenant = await createTenant(app.storage, { windows: ['mon-fri 09:00-17:00'], outsideWindow: 'queue' });
    const callId = callIdOf(await trigger(app, tenant.key));
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).notBefore.toISOString()).toBe(
      '2058-03-11T09:00:00.000Z',
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
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).notBefore.toISOString()).toBe(
      '2058-03-11T09:00:00.000Z',
    );
    await createUserWithPassword(app.storage, tenant.accountId, 'waiting@agents.example');
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
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).notBefore).toEqual(clock.now);
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
    const before = await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agencyAgent.id } });
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
    expect(await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agencyAgent.id } })).toEqual(before);
    expect(await prismaOf(app).agent.count({ where: { name: 'Into the agency' } })).toBe(0);
    expect((await clientUser.get('/dashboard/agents/not-an-id')).status).toBe(404);

    // Their own: created under their client whatever the form says of an owner, edited, set as default.
    expect((await createAs(clientUser, { name: 'Client voice', phone: '+14155550188' })).status).toBe(303);
    const own = await agentNamed('Client voice');
    expect(own.accountId).toBe(client.accountId);
    expect((await post(clientUser, '/dashboard/agents', `/dashboard/agents/${own.id}/default`, [])).status).toBe(303);
    expect((await prismaOf(app).account.findUniqueOrThrow({ where: { id: client.accountId } })).defaultAgentId).toBe(
      own.id,
    );
  });
});

describe('agent settings: retries, voicemail, whose time the windows are read in', () => {
  /** A signed-in user of a tenant of its own, whose agent has weekday windows (calls queue on this Saturday). */
  async function ownTenant(email: string, ip: string) {
    const tenant = await createTenant(app.storage, { windows: ['mon-fri 09:00-17:00'], outsideWindow: 'queue' });
    await createUserWithPassword(app.storage, tenant.accountId, email);
    const visitor = new Visitor(app);
    visitor.ip = ip;
    expect((await visitor.signIn(email)).status).toBe(303);
    return { tenant, visitor };
  }
  /** The tenant's agent as createTenant made it, as the form sends it. */
  const asMade: AgentInput = { name: 'Test Agent', phone: '+14155550100', windows: [['mon-fri', '09:00', '17:00']] };
  const rowOf = (list: string, name: string) => list.split('<tr>').find((r) => r.includes(`>${html(name)}</a>`))!;

  it("offers today's behaviour on a new agent's form, and a form without the settings keeps it", async () => {
    const form = (await agencyUser.get('/dashboard/agents/new')).body;
    expect(form).toContain('Attempts in all');
    expect(form).toMatch(
      /<select id="f-max_attempts" name="max_attempts"[^>]*>\s*<option selected>1<\/option>\s*<option>2<\/option>/,
    );
    expect(form).toContain('Retry when:');
    for (const outcome of ['busy', 'no_answer', 'voicemail'])
      expect(form).toContain(`<input type="checkbox" name="retry_on" value="${outcome}">`);
    expect(form).toContain('Wait between attempts (minutes)');
    expect(form).toContain('name="retry_waits_minutes" value="30, 120, 1440"');
    expect(form).toContain('When a machine answers');
    expect(form).toContain('<input type="radio" name="voicemail" value="off" checked> Do nothing (no detection)');
    expect(form).toContain('<input type="radio" name="voicemail" value="hang_up"> Hang up');
    expect(form).toContain('<input type="radio" name="voicemail" value="leave_message"> Leave a message');
    expect(form).toContain('Calling hours are read in');
    expect(form).toContain('<input type="radio" name="window_timezone" value="agent" checked>');

    expect((await createAs(agencyUser, { name: 'Plain defaults', phone: '+14155550131' })).status).toBe(303);
    expect(await agentNamed('Plain defaults')).toMatchObject({
      maxAttempts: 1,
      retryOn: [],
      retryWaitsMinutes: [30, 120, 1440],
      voicemail: 'off',
      voicemailMessage: null,
      windowTimezone: 'agent',
    });
    const row = rowOf((await agencyUser.get('/dashboard/agents')).body, 'Plain defaults');
    expect(row).toContain('<dt>Attempts</dt><dd>One attempt (no retry)</dd>');
    expect(row).toContain('<dt>When a machine answers</dt><dd>Do nothing (no detection)</dd>');
    expect(row).toContain('in the agent&#39;s time zone');
  });

  it('creates an agent with every setting, audits them, and shows them in words on the list and its page', async () => {
    const res = await createAs(agencyUser, {
      name: 'Persistent',
      phone: '+14155550132',
      timezone: 'Europe/Berlin',
      windows: [['mon-fri', '09:00', '20:00']],
      windowTimezone: 'recipient',
      maxAttempts: '4',
      retryOn: ['busy', 'no_answer', 'voicemail'],
      retryWaits: ' 30 , 90 ',
      voicemail: 'leave_message',
      // A textarea sends CRLF line breaks: stored as LF.
      voicemailMessage: ' Hello {{name}},\r\nwe will call again. ',
    });
    expect(res.status).toBe(303);
    const agent = await agentNamed('Persistent');
    expect(agent).toMatchObject({
      windowTimezone: 'recipient',
      maxAttempts: 4,
      retryOn: ['busy', 'no_answer', 'voicemail'],
      retryWaitsMinutes: [30, 90],
      voicemail: 'leave_message',
      voicemailMessage: 'Hello {{name}},\nwe will call again.',
    });
    const audit = await prismaOf(app).auditEntry.findFirst({
      where: { action: 'agent_created', detail: { path: ['agent_id'], equals: agent.id } },
    });
    expect(audit!.detail).toMatchObject({
      window_timezone: 'recipient',
      max_attempts: 4,
      retry_on: ['busy', 'no_answer', 'voicemail'],
      retry_waits_minutes: [30, 90],
      voicemail: 'leave_message',
      voicemail_message: 'Hello {{name}},\nwe will call again.',
    });

    const row = rowOf((await agencyUser.get('/dashboard/agents')).body, 'Persistent');
    expect(row).toContain(
      '<dt>Attempts</dt><dd>Up to 4 attempts, retried when busy, no answer or voicemail, after 30 min, then 1 h 30 min, then 1 h 30 min</dd>',
    );
    expect(row).toContain(
      '<dt>When a machine answers</dt><dd>Leave a message: “Hello {{name}},\nwe will call again.”</dd>',
    );
    expect(row).toContain(html("in the callee's time zone (else the agent's)"));

    const page = (await agencyUser.get(`/dashboard/agents/${agent.id}`)).body;
    expect(page).toContain(
      '<dt>Attempts</dt><dd>Up to 4 attempts, retried when busy, no answer or voicemail, after 30 min, then 1 h 30 min, then 1 h 30 min</dd>',
    );
    expect(page).toContain(
      '<dt>When a machine answers</dt><dd>Leave a message: “Hello {{name}},\nwe will call again.”</dd>',
    );
    expect(page).toContain(
      `<dt>Calling hours in</dt><dd>${html("The callee's time zone (from the trigger or their number; else Europe/Berlin)")}</dd>`,
    );
    expect(page).toMatch(/<select id="f-max_attempts" name="max_attempts"[^>]*>[\s\S]*<option selected>4<\/option>/);
    for (const outcome of ['busy', 'no_answer', 'voicemail'])
      expect(page).toContain(`<input type="checkbox" name="retry_on" value="${outcome}" checked>`);
    expect(page).toContain('name="retry_waits_minutes" value="30, 90"');
    expect(page).toContain('<input type="radio" name="voicemail" value="leave_message" checked>');
    expect(page).toContain('>Hello {{name}},\nwe will call again.</textarea>');
    expect(page).toContain('<input type="radio" name="window_timezone" value="recipient" checked>');
  });

  it('cuts a long message short on the list only', async () => {
    const message = `${'Please call us back about your order. '.repeat(5)}{{name}}`;
    expect(
      (
        await createAs(agencyUser, {
          name: 'Talkative',
          voicemail: 'leave_message',
          voicemailMessage: message,
        })
      ).status,
    ).toBe(303);
    const row = rowOf((await agencyUser.get('/dashboard/agents')).body, 'Talkative');
    expect(row).toContain(`<dt>When a machine answers</dt><dd>Leave a message: “${message.slice(0, 59)}…”</dd>`);
    const agent = await agentNamed('Talkative');
    expect((await agencyUser.get(`/dashboard/agents/${agent.id}`)).body).toContain(
      `<dd>Leave a message: “${message}”</dd>`,
    );
  });

  it('refuses each bad setting with its words next to it, keeps what was typed, and stores nothing, on a create and an edit', async () => {
    const over = 'x'.repeat(501);
    /** The domain's words for a setting (callctl's too), as a sentence. */
    const domain = (input: Parameters<typeof agentInputProblem>[0]) => `${agentInputProblem(input)!}.`;
    const cases: { input: Partial<AgentInput>; key: string; words: string; typed?: string }[] = [
      { input: { maxAttempts: '7' }, key: 'max_attempts', words: domain({ maxAttempts: '7' }) },
      { input: { maxAttempts: '2', retryOn: ['rejected'] }, key: 'retry_on', words: domain({ retryOn: ['rejected'] }) },
      {
        input: { retryWaits: '0' },
        key: 'retry_waits_minutes',
        words: domain({ retryWaits: '0' }),
        typed: 'value="0"',
      },
      {
        input: { retryWaits: '30, 120, 1440, 2880' },
        key: 'retry_waits_minutes',
        words: domain({ retryWaits: '30, 120, 1440, 2880' }),
        typed: 'value="30, 120, 1440, 2880"',
      },
      { input: { retryWaits: '10081' }, key: 'retry_waits_minutes', words: domain({ retryWaits: '10081' }) },
      { input: { retryWaits: '' }, key: 'retry_waits_minutes', words: domain({ retryWaits: '' }) },
      {
        input: { voicemail: 'hang_up', voicemailMessage: 'Hi\tthere' },
        key: 'voicemail_message',
        words: domain({ voicemailMessage: 'Hi\tthere' }),
      },
      {
        input: { voicemail: 'leave_message', voicemailMessage: over },
        key: 'voicemail_message',
        words: domain({ voicemailMessage: over }),
        typed: `>${over}</textarea>`,
      },
      {
        input: { voicemail: 'leave_message', voicemailMessage: 'Hi {{first_name}}' },
        key: 'voicemail_message',
        words: domain({ voicemailMessage: 'Hi {{first_name}}' }),
      },
      {
        input: { voicemail: 'leave_message', voicemailMessage: '  ' },
        key: 'voicemail_message',
        words: 'Write the message to leave on a machine, or choose another answer above.',
      },
      {
        input: { maxAttempts: '3', retryOn: [] },
        key: 'retry_on',
        words: 'Trying up to 3 times needs a reason to try again: tick busy, no answer or voicemail (or try once).',
      },
      {
        input: { maxAttempts: '2', retryOn: ['voicemail'], voicemail: 'off' },
        key: 'voicemail',
        words:
          'Retrying on voicemail needs a machine to be detected: choose "Hang up" or "Leave a message" (or untick voicemail).',
      },
    ];
    const agents = await prismaOf(app).agent.count();
    const audits = await prismaOf(app).auditEntry.count();
    const stored = await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agency.agentId } });
    for (const { input, key, words, typed } of cases) {
      const label = JSON.stringify(input);
      for (const res of [
        await createAs(agencyUser, { name: 'Never stored', ...input }),
        await editAs(agencyUser, agency.agentId, { name: 'Never saved', phone: '+14155550177', ...input }),
      ]) {
        expect(res.status, label).toBe(400);
        expect(Object.keys(fieldErrors(res.body)), label).toEqual([key]);
        expectFieldError(res.body, key, words);
        if (typed) expect(res.body, label).toContain(typed);
      }
    }
    expect(await prismaOf(app).agent.count()).toBe(agents);
    expect(await prismaOf(app).auditEntry.count()).toBe(audits);
    expect(await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agency.agentId } })).toEqual(stored);
  });

  it('names every setting the schema refuses at once, each beside its field', async () => {
    const input: AgentInput = {
      name: 'Many wrong settings',
      phone: '+1 415 555 0100 ext 7',
      maxAttempts: '9',
      retryOn: ['busy', 'rejected'],
      retryWaits: 'thirty',
      voicemail: 'hang_up',
      voicemailMessage: 'Ring\u0007ring',
    };
    const before = await prismaOf(app).agent.count();
    const res = await createAs(agencyUser, input);
    expect(res.status).toBe(400);
    expect(res.body).toContain(`<p class="notice error" role="alert">${FIELDS_PROBLEM}</p>`);
    expect(Object.keys(fieldErrors(res.body)).sort()).toEqual(
      ['phone', 'max_attempts', 'retry_on', 'retry_waits_minutes', 'voicemail_message'].sort(),
    );
    expectFieldError(res.body, 'max_attempts', `${agentInputProblem({ maxAttempts: '9' })!}.`);
    expectFieldError(res.body, 'retry_on', `${agentInputProblem({ retryOn: ['rejected'] })!}.`);
    expectFieldError(res.body, 'retry_waits_minutes', `${agentInputProblem({ retryWaits: 'thirty' })!}.`);
    expectFieldError(res.body, 'voicemail_message', `${agentInputProblem({ voicemailMessage: 'Ring\u0007ring' })!}.`);
    expect(res.body).toContain('value="thirty"');
    expect(res.body).toContain('<input type="checkbox" name="retry_on" value="busy" checked aria-invalid="true">');
    expect(res.body).toContain('<input type="radio" name="voicemail" value="hang_up" checked>');
    expect(await prismaOf(app).agent.count()).toBe(before);
  });

  it('audits only the settings an edit changes, and the same form again changes nothing', async () => {
    const { tenant, visitor } = await ownTenant('settings@agents.example', '203.0.113.21');
    const edit: AgentInput = { ...asMade, maxAttempts: '2', retryOn: ['busy'], retryWaits: '30, 120, 1440' };
    expect((await editAs(visitor, tenant.agentId, edit)).status).toBe(303);
    const audit = await prismaOf(app).auditEntry.findFirst({
      where: { action: 'agent_changed', accountId: tenant.accountId },
      orderBy: { createdAt: 'desc' },
    });
    expect(audit).toMatchObject({ actorKind: 'user', ip: '203.0.113.21' });
    expect(audit!.detail).toEqual({ agent_id: tenant.agentId, max_attempts: 2, retry_on: ['busy'] });
    expect((await visitor.get('/dashboard/agents')).body).toContain('Agent Test Agent saved.');

    const entries = await prismaOf(app).auditEntry.count();
    expect((await editAs(visitor, tenant.agentId, edit)).status).toBe(303);
    expect((await visitor.get('/dashboard/agents')).body).toContain('Nothing changed.');
    expect(await prismaOf(app).auditEntry.count()).toBe(entries);

    // Back to one attempt with no outcome ticked: the form sends no retry_on at all, which is none.
    expect((await editAs(visitor, tenant.agentId, { ...asMade, maxAttempts: '1' })).status).toBe(303);
    expect(await prismaOf(app).agent.findUniqueOrThrow({ where: { id: tenant.agentId } })).toMatchObject({
      maxAttempts: 1,
      retryOn: [],
    });
  });

  it('new windows hand waiting calls back, each due at its schedule or next attempt when later; a zone switch moves none', async () => {
    const { tenant, visitor } = await ownTenant('zone@agents.example', '203.0.113.22');
    // Scheduled for this Saturday evening, waiting for Monday's window; a retry due next Wednesday, inside the window.
    const scheduledAt = new Date('2058-03-09T19:00:00.000Z');
    const monday = new Date('2058-03-11T09:00:00.000Z');
    const nextAttempt = new Date('2058-03-13T10:00:00.000Z');
    const [forWindow, scheduled, retrying] = [
      callIdOf(await trigger(app, tenant.key)),
      callIdOf(await trigger(app, tenant.key)),
      callIdOf(await trigger(app, tenant.key)),
    ];
    await forceCall(prismaOf(app), scheduled, { scheduledAt, notBefore: monday });
    await forceCall(prismaOf(app), retrying, { attempt: 2, nextAttemptAt: nextAttempt, notBefore: nextAttempt });
    const notBefore = async (id: string) =>
      (await prismaOf(app).call.findUniqueOrThrow({ where: { id } })).notBefore.toISOString();
    expect(await notBefore(forWindow)).toBe(monday.toISOString());

    // A call's zone is fixed when it is accepted: reading the windows in the callee's zone moves no waiting call.
    expect((await editAs(visitor, tenant.agentId, { ...asMade, windowTimezone: 'recipient' })).status).toBe(303);
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id: tenant.agentId } })).windowTimezone).toBe(
      'recipient',
    );
    for (const [id, at] of [
      [forWindow, monday],
      [scheduled, monday],
      [retrying, nextAttempt],
    ] as const)
      expect(await notBefore(id)).toBe(at.toISOString());

    // New windows: due now, at its scheduled time, or (already due then) at its next attempt.
    const weekend: AgentInput = { ...asMade, windowTimezone: 'recipient', windows: [['sat,sun', '10:00', '22:00']] };
    expect((await editAs(visitor, tenant.agentId, weekend)).status).toBe(303);
    expect(await notBefore(forWindow)).toBe(clock.now.toISOString());
    expect(await notBefore(scheduled)).toBe(scheduledAt.toISOString());
    expect(await notBefore(retrying)).toBe(nextAttempt.toISOString());
  });
});
