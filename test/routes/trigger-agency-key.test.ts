// The trigger with an agency's key on one of its client's agents (PRODUCT.md, "Agency keys and clients' agents"): the
// call is the agency's (account_id) and listed for the client; the do-not-call lists of both apply at the trigger; and
// a trigger without agent_id uses the key's account's own default agent only, never a client's.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { OPERATOR } from '../../src/admin/accounts.js';
import { addToDoNotCall } from '../../src/admin/do-not-call.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant, makeDefaultAgent } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceAccount } from '../helpers/seed.js';

let app: App;
let agency: Tenant;
let client: Tenant;

beforeAll(async () => {
  ({ app } = await buildTestApp());
  agency = await createTenant(app.storage);
  client = await createClientTenant(app.storage, agency.accountId);
});

const ON_LIST = { success: false, error: 'Phone number is on the do-not-call list' };

describe("an agency key on its client's agent", () => {
  it("stores the call as the agency's, listed for the client", async () => {
    const res = await trigger(app, agency.key, { phone_number: '+14155550401', agent_id: client.agentId });
    expect(res.statusCode).toBe(200);
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });
    expect(call).toMatchObject({
      accountId: agency.accountId,
      agencyId: agency.accountId,
      agentId: client.agentId,
      listedForAccountId: client.accountId,
    });
    // The agency's own agent, and the client's own key: listed for nobody else.
    const own = await trigger(app, agency.key, { phone_number: '+14155550402', agent_id: agency.agentId });
    const byClient = await trigger(app, client.key, { phone_number: '+14155550403' });
    for (const id of [callIdOf(own), callIdOf(byClient)])
      expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id } })).listedForAccountId).toBeNull();
  });

  it("refuses a number on the client's do-not-call list, and one on the agency's", async () => {
    await addToDoNotCall(app.storage, {
      now: app.now(),
      accountId: client.accountId,
      phoneNumber: '+14155550411',
      actor: OPERATOR,
    });
    await addToDoNotCall(app.storage, {
      now: app.now(),
      accountId: agency.accountId,
      phoneNumber: '+14155550412',
      actor: OPERATOR,
    });
    const before = await prismaOf(app).call.count();
    for (const phone of ['+14155550411', '+14155550412']) {
      const res = await trigger(app, agency.key, { phone_number: phone, agent_id: client.agentId });
      expect([res.statusCode, res.json()]).toEqual([400, ON_LIST]);
    }
    expect(await prismaOf(app).call.count()).toBe(before);
    // The client's list covers the client's agents only: the agency's own agent may still call the number.
    const own = await trigger(app, agency.key, { phone_number: '+14155550411', agent_id: agency.agentId });
    expect(own.statusCode).toBe(200);
  });

  it("never uses a client's agent without agent_id, even when an old row makes it the agency's default", async () => {
    // A default picked before the rule (migration 20261201160005 clears such rows; this one is written after it).
    await forceAccount(prismaOf(app), agency.accountId, { defaultAgentId: client.agentId });
    const before = await prismaOf(app).call.count();
    const res = await trigger(app, agency.key, { phone_number: '+14155550421' });
    expect([res.statusCode, res.json()]).toEqual([
      400,
      { success: false, error: 'No agent specified and no default agent configured' },
    ]);
    expect(await prismaOf(app).call.count()).toBe(before);
    await makeDefaultAgent(app.storage, agency.accountId, agency.agentId);
    const ok = await trigger(app, agency.key, { phone_number: '+14155550421' });
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(ok) } })).agentId).toBe(agency.agentId);
  });
});
