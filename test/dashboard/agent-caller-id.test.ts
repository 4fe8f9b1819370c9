// An agent's caller ID as people type it (issue 45, point 22): "+1 415 555 2671" and "(415) 555-2671" (read in the
// account's country: its agents' numbers' country, else the US) are saved as the E.164 number, which the page then
// shows; what is no number is refused next to the field. The trigger API is untouched: it takes E.164 only. The
// do-not-call forms read numbers in the same country, by the same rule.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { createAgent, setAgentArchived } from '../../src/admin/agents.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

let app: App;
let us: Visitor;
let gb: Visitor;
let gbAgency: string;

async function signedIn(accountId: string, email: string) {
  await createUserWithPassword(app.storage, accountId, email);
  const visitor = new Visitor(app);
  expect((await visitor.signIn(email)).status).toBe(303);
  return visitor;
}

/** Creates an agent from the new-agent page with these fields (besides a name and UTC); the answer. */
async function create(visitor: Visitor, name: string, fields: Record<string, string>) {
  return visitor.submit('/dashboard/agents/new', '/dashboard/agents', {
    name,
    timezone: 'UTC',
    policy: 'queue',
    ...fields,
  });
}

const phoneOf = async (name: string) => (await prismaOf(app).agent.findFirstOrThrow({ where: { name } })).phoneNumber;
const phoneField = (body: string) => /<input type="tel" id="f-phone" name="phone" value="([^"]*)"/.exec(body)?.[1];

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  const { id: usAgency } = await createAgency(app.storage, { name: 'US agency' });
  us = await signedIn(usAgency, 'owner@us-caller.example');
  ({ id: gbAgency } = await createAgency(app.storage, { name: 'GB agency' }));
  // Its agents' numbers are British: a number typed without a country code is read as one.
  await createAgent(app.storage, { now: app.now(), accountId: gbAgency, name: 'London', phone: '+442071838750' });
  await createAgent(app.storage, { now: app.now(), accountId: gbAgency, name: 'Mobile', phone: '+447911123456' });
  await createAgent(app.storage, { now: app.now(), accountId: gbAgency, name: 'New York', phone: '+12125550100' });
  gb = await signedIn(gbAgency, 'owner@gb-caller.example');
});

describe("an agent's caller ID", () => {
  it('is saved in E.164 however it is written, and the notice and the page say the number stored', async () => {
    const cases: [string, string][] = [
      ['+1 415 555 2671', '+14155552671'],
      ['(415) 555-2671', '+14155552671'],
      ['415.555.2671', '+14155552671'],
      ['+44 20 7183 8750', '+442071838750'],
      ['+14155552672', '+14155552672'],
    ];
    for (const [i, [typed, stored]] of cases.entries()) {
      const created = await create(us, `Typed ${i}`, { phone: typed });
      expect(created.status, typed).toBe(303);
      expect(await phoneOf(`Typed ${i}`), typed).toBe(stored);
      const list = (await us.get('/dashboard/agents')).body;
      if (typed === stored) expect(list).not.toContain('Its caller ID is stored as');
      else expect(list, typed).toContain(`Agent Typed ${i} created. Its caller ID is stored as ${stored}.`);
      const { id } = await prismaOf(app).agent.findFirstOrThrow({ where: { name: `Typed ${i}` } });
      expect(phoneField((await us.get(`/dashboard/agents/${id}`)).body)).toBe(stored);
    }
  });

  it("reads a number without its country code in the account's country, and says which", async () => {
    const page = (await gb.get('/dashboard/agents/new')).body;
    expect(page).toContain('number of United Kingdom (+44), such as (415) 555-2671');
    expect((await us.get('/dashboard/agents/new')).body).toContain('number of United States (+1), such as');
    expect((await create(gb, 'Croydon', { phone: '020 8123 4567' })).status).toBe(303);
    expect(await phoneOf('Croydon')).toBe('+442081234567');
    expect((await create(us, 'Bay', { phone: '(650) 555-0123' })).status).toBe(303);
    expect(await phoneOf('Bay')).toBe('+16505550123');
  });

  it('an edit takes a typed number too', async () => {
    const { id } = await prismaOf(app).agent.findFirstOrThrow({ where: { name: 'London', accountId: gbAgency } });
    const saved = await gb.submit(`/dashboard/agents/${id}`, `/dashboard/agents/${id}`, {
      name: 'London',
      phone: '020 7946 0000',
      timezone: 'Europe/London',
      policy: 'queue',
    });
    expect(saved.status).toBe(303);
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id } })).phoneNumber).toBe('+442079460000');
  });

  it('shown again for another field, it shows the E.164 number it would store', async () => {
    const res = await create(us, '', { phone: '(415) 555-2673' });
    expect(res.status).toBe(400);
    expect(res.body).toContain('Give the agent a name.');
    expect(phoneField(res.body)).toBe('+14155552673');
  });

  it('what is no number is refused next to the field, as typed', async () => {
    const words: [string, RegExp][] = [
      ['call me', /Write the number in digits/],
      ['1-800-FLOWERS', /Write the number in digits/],
      ['555-2671', /This is not a possible number: check the country code and the digits/],
      ['+1 415 555 26711', /This is not a possible number/],
    ];
    for (const [typed, problem] of words) {
      const res = await create(us, 'Refused', { phone: typed });
      expect(res.status, typed).toBe(400);
      expect(res.body, typed).toMatch(new RegExp(`<p class="field-error" id="f-phone-error">${problem.source}`));
      expect(res.body, typed).toContain('Some fields need a change');
    }
    expect(await prismaOf(app).agent.count({ where: { name: 'Refused' } })).toBe(0);
  });

  it("the do-not-call forms read in the same country: an agency's counts its clients' agents in use", async () => {
    const { id: agency } = await createAgency(app.storage, { name: 'Mixed agency' });
    // The agency's own agents are archived (Paris); its client's agent, in use, calls from London.
    for (const [i, phone] of ['+33142685300', '+33612345678'].entries()) {
      const { id } = await createAgent(app.storage, { now: app.now(), accountId: agency, name: `Paris ${i}`, phone });
      await setAgentArchived(app.storage, id, true, undefined, app.now());
    }
    const { id: client } = await createClient(app.storage, { now: app.now(), agencyId: agency, name: 'London client' });
    await createAgent(app.storage, { now: app.now(), accountId: client, name: 'Westminster', phone: '+442071838750' });
    // A client of it without agents takes the agency's country.
    const { id: quiet } = await createClient(app.storage, { now: app.now(), agencyId: agency, name: 'Quiet client' });
    const mixed = await signedIn(agency, 'owner@mixed-caller.example');

    expect((await mixed.get('/dashboard/agents/new')).body).toContain('number of United Kingdom (+44), such as');
    for (const accountId of [agency, client, quiet]) {
      const list = accountId === agency ? '/dashboard/do-not-call' : `/dashboard/clients/${accountId}/do-not-call`;
      expect((await mixed.get(list)).body, accountId).toContain('as dialled in GB without one');
      const added = await mixed.submit(list, `${list}/add`, { phone_number: '020 7946 0958' });
      expect(added.status, accountId).toBe(303);
      const entry = await prismaOf(app).doNotCallEntry.findFirst({ where: { accountId } });
      expect(entry?.phoneNumber, accountId).toBe('+442079460958');
    }
    // A caller ID typed without a country code, for the agency and for its client without agents: read in GB too.
    expect((await create(mixed, 'Soho', { phone: '020 7183 8751' })).status).toBe(303);
    expect(await phoneOf('Soho')).toBe('+442071838751');
    expect((await create(mixed, 'Quiet one', { account: quiet, phone: '020 7183 8752' })).status).toBe(303);
    expect(await phoneOf('Quiet one')).toBe('+442071838752');
  });
});
