// A call an agency's key places on one of its client's agents (PRODUCT.md, "Agency keys and clients' agents"): it is
// the agency's for its concurrency limit and its webhook endpoint (the client's limit and endpoint never see it), and
// the client's do-not-call list applies before every attempt as the agency's does: a number the client lists after
// acceptance ends the call failed, do_not_call, never dialled.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import { addToDoNotCall } from '../../src/admin/do-not-call.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

const FAST = { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30' };
/** Friday 18:30 in New York: the office-hours window is closed, so accepted calls wait. */
const FRIDAY_EVENING = new Date('2054-11-27T23:30:00Z');
/** Monday 09:00 in New York: it opens. */
const MONDAY_MORNING = new Date('2054-11-30T14:00:00Z');

function dialLog(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-agency-key-dials-')), 'dials.log');
}
const dialled = (log: string) => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

describe("an agency key on a client's agent", () => {
  it("counts against the agency's limit, not the client's, and its events go to the agency's endpoint only", async () => {
    const log = dialLog();
    const { app } = await buildTestApp({
      env: {
        ...FAST,
        MAX_CONCURRENT_CALLS: '1',
        SIMULATED_TALK_MS: '60000',
        SIMULATED_DIAL_LOG: log,
        WEBHOOK_DELIVERY_ENABLED: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      },
    });
    const agency = await createTenant(app.storage);
    const client = await createClientTenant(app.storage, agency.accountId);
    const [agencyHooks, clientHooks] = [await startReceiver(), await startReceiver()];
    await setWebhook(app.storage, agency.accountId, agencyHooks.url, { now: app.now(), allowPrivate: true });
    await setWebhook(app.storage, client.accountId, clientHooks.url, { now: app.now(), allowPrivate: true });

    const byAgency = async (phone: string) =>
      callIdOf(await trigger(app, agency.key, { phone_number: phone, agent_id: client.agentId }));
    const first = await byAgency('+14155550301');
    const second = await byAgency('+14155550302');
    await app.dispatcher!.settle();
    // The agency's one slot holds the first; the second waits for it.
    expect(dialled(log)).toEqual([first]);
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: second } })).status).toBe('initiated');
    // The client's own slot is free: its own call is dialled at once.
    const own = callIdOf(await trigger(app, client.key, { phone_number: '+14155550303' }));
    await app.dispatcher!.settle();
    expect(dialled(log)).toEqual([first, own]);
    const counts = await app.storage.calls.liveCallCounts([agency.accountId, client.accountId], new Date());
    expect(counts.get(agency.accountId)).toMatchObject({ active: 1, waiting: 1 });
    expect(counts.get(client.accountId)).toMatchObject({ active: 1, waiting: 0 });

    // call.started of the agency's call reaches the agency's endpoint; the client's endpoint hears only its own call.
    const [started] = await agencyHooks.waitFor(1);
    expect(JSON.parse(started!.body)).toMatchObject({ type: 'call.started', data: { call_id: first } });
    const [clientStarted] = await clientHooks.waitFor(1);
    expect(JSON.parse(clientStarted!.body)).toMatchObject({ type: 'call.started', data: { call_id: own } });
    await app.dispatcher!.settle();
    const toClient = clientHooks.received.map(
      (r) => (JSON.parse(r.body) as { data: { call_id: string } }).data.call_id,
    );
    expect(toClient).not.toContain(first);
    expect(
      await prismaOf(app).webhookDelivery.count({
        where: { callId: first, endpoint: { accountId: client.accountId } },
      }),
    ).toBe(0);
  });

  it('fails the call do_not_call before dialling when the client lists the number after acceptance', async () => {
    let now = FRIDAY_EVENING;
    const log = dialLog();
    const { app } = await buildTestApp({ clock: () => now, env: { ...FAST, SIMULATED_DIAL_LOG: log } });
    const agency = await createTenant(app.storage);
    const client = await createClientTenant(app.storage, agency.accountId);
    const { id: agentId } = await createAgent(app.storage, {
      now: app.now(),
      accountId: client.accountId,
      name: 'office hours',
      phone: '+14155550111',
      timezone: 'America/New_York',
      windows: ['mon-fri 09:00-17:00'],
      outsideWindow: 'queue',
    });
    const listedLater = callIdOf(await trigger(app, agency.key, { phone_number: '+14155550311', agent_id: agentId }));
    const free = callIdOf(await trigger(app, agency.key, { phone_number: '+14155550312', agent_id: agentId }));
    await app.dispatcher!.settle();
    await addToDoNotCall(app.storage, {
      now: app.now(),
      accountId: client.accountId,
      phoneNumber: '+14155550311',
      actor: OPERATOR,
    });
    now = MONDAY_MORNING;
    await app.dispatcher!.settle();
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: listedLater } })).toMatchObject({
      status: 'failed',
      failureReason: 'do_not_call',
      dialAttempts: 0,
      startedAt: null,
    });
    expect(dialled(log)).toEqual([free]);
  });
});
