// Agent selection and tenancy, calling windows (reject or queue, in the agent's zone), and the bounded queue.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createAgent } from '../../src/admin/agents.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

let app: App;
let now = new Date('2054-11-23T15:00:00Z'); // a Monday: 10:00 in New York
let agency: Tenant;
let clientA: Tenant;
let clientB: Tenant;
let otherAgency: Tenant;

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => now }));
  agency = await createTenant(app.storage);
  clientA = await createClientTenant(app.storage, agency.accountId);
  clientB = await createClientTenant(app.storage, agency.accountId);
  otherAgency = await createTenant(app.storage);
});

const withAgent = (agentId: string) => ({ phone_number: '+14155552671', agent_id: agentId });
const forbidden = { success: false, error: 'API key does not have access to this agent' };

describe('tenancy: every combination of key and agent', () => {
  it.each([
    ['agency key, own agent', () => agency, () => agency.agentId, 200],
    ["agency key, its client's agent", () => agency, () => clientA.agentId, 200],
    ["agency key, another agency's agent", () => agency, () => otherAgency.agentId, 403],
    ["agency key, another agency's... client's agent", () => otherAgency, () => clientA.agentId, 403],
    ['client key, own agent', () => clientA, () => clientA.agentId, 200],
    ["client key, its agency's agent", () => clientA, () => agency.agentId, 403],
    ["client key, a sibling client's agent", () => clientA, () => clientB.agentId, 403],
    ["client key, another agency's agent", () => clientA, () => otherAgency.agentId, 403],
  ])('%s -> %i', async (_name, key, agent, status) => {
    const before = await prismaOf(app).call.count();
    const res = await trigger(app, key().key, withAgent(agent()));
    expect(res.statusCode).toBe(status);
    if (status === 403) {
      expect(res.json()).toEqual(forbidden);
      expect(await prismaOf(app).call.count()).toBe(before);
    } else {
      const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });
      expect([call.accountId, call.agentId]).toEqual([key().accountId, agent()]);
    }
  });

  it('an id that is no agent at all is 400 Agent not found, for any key', async () => {
    for (const tenant of [agency, clientA]) {
      const res = await trigger(app, tenant.key, withAgent('6f1f5a86-1c1e-4c59-9a43-000000000000'));
      expect([res.statusCode, res.json()]).toEqual([400, { success: false, error: 'Agent not found' }]);
    }
  });

  it('without agent_id the default agent is used', async () => {
    const res = await trigger(app, clientA.key);
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });
    expect(call.agentId).toBe(clientA.agentId);
  });
});

describe('calling windows', () => {
  const windowed = async (outsideWindow: 'queue' | 'reject') =>
    (
      await createAgent(app.storage, {
        accountId: agency.accountId,
        name: `${outsideWindow} agent`,
        phone: '+14155550111',
        timezone: 'America/New_York',
        windows: ['mon-fri 09:00-17:00'],
        outsideWindow,
        now: app.now(),
      })
    ).id;

  it('inside the window the call may start at once', async () => {
    now = new Date('2054-11-23T15:00:00Z');
    const res = await trigger(app, agency.key, withAgent(await windowed('reject')));
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });
    expect(call.notBefore.toISOString()).toBe(now.toISOString());
  });

  it("policy reject: 400 Outside the agent's calling window, and nothing stored", async () => {
    now = new Date('2054-11-23T23:30:00Z'); // 18:30 in New York
    const before = await prismaOf(app).call.count();
    const res = await trigger(app, agency.key, withAgent(await windowed('reject')));
    expect([res.statusCode, res.json()]).toEqual([
      400,
      { success: false, error: "Outside the agent's calling window" },
    ]);
    expect(await prismaOf(app).call.count()).toBe(before);
  });

  it('policy queue: accepted, with the time the window next opens recorded (across a weekend)', async () => {
    now = new Date('2054-11-27T23:30:00Z'); // Friday 18:30 in New York
    const res = await trigger(app, agency.key, withAgent(await windowed('queue')));
    expect(res.json()).toMatchObject({ success: true, status: 'initiated' });
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });
    expect(call.notBefore.toISOString()).toBe('2054-11-30T14:00:00.000Z'); // Monday 09:00 EST
    expect(call.expiresAt.getTime() - call.notBefore.getTime()).toBe(24 * 3600_000);
  });
});

describe('the waiting queue is bounded per account', () => {
  it('beyond MAX_QUEUED_CALLS: 429 Too many calls waiting, with Retry-After; other accounts unaffected', async () => {
    const { app: small } = await buildTestApp({ env: { MAX_QUEUED_CALLS: '3' } });
    const full = await createTenant(small.storage);
    const other = await createTenant(small.storage);
    const results = await Promise.all(Array.from({ length: 6 }, () => trigger(small, full.key)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(3);
    const refused = results.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(3);
    for (const r of refused) {
      expect(r.json()).toEqual({
        success: false,
        error: `Too many calls waiting. Retry after ${r.headers['retry-after']} seconds.`,
      });
    }
    expect(await prismaOf(small).call.count({ where: { accountId: full.accountId } })).toBe(3);
    expect((await trigger(small, other.key)).statusCode).toBe(200);
  });
});
