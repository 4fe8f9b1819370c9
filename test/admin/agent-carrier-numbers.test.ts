// An agent's caller ID belongs to its account's carrier (issue 50, point 3): when the carrier in use (the account's
// own, or its agency's) lists its numbers, an agent is created or given a new caller ID only from them, refused with
// words naming the numbers (callctl prints them; the dashboard shows them beside the caller-ID field) and nothing
// stored; a carrier that does not list numbers, and the environment's, check nothing; a change of other fields of an
// agent whose number the carrier stopped listing is not blocked.
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import { CallerIdNotOnCarrier, createAgent, updateAgent } from '../../src/admin/agents.js';
import { removeCarrier, setCarrier } from '../../src/admin/carriers.js';
import type { App } from '../../src/app.js';
import { checkCarrierAccount } from '../../src/dispatch/carrier-accounts.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import {
  CARRIER_SID,
  CARRIER_TOKEN,
  CarrierAccountsStandIn,
  TWILIO_NUMBERS,
} from '../helpers/carrier-accounts-stand-in.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';

let app: App;
const standIn = new CarrierAccountsStandIn();

beforeAll(async () => {
  ({ app } = await buildTestApp());
  await standIn.start();
});

const UNLISTED = '+14155559876';

const setTwilio = (accountId: string) =>
  setCarrier(
    app.storage,
    accountId,
    { provider: 'twilio', credentials: { account_sid: CARRIER_SID, auth_token: CARRIER_TOKEN } },
    OPERATOR,
    (carrier) => checkCarrierAccount(carrier, { twilioApiBaseUrl: standIn.url, telnyxApiBaseUrl: standIn.url }),
    app.now(),
  );
const create = (accountId: string, phone: string) =>
  createAgent(app.storage, { accountId, name: `Agent ${phone}`, phone, now: app.now() }, OPERATOR);
const refusal = (work: Promise<unknown>) =>
  work.then(
    () => null,
    (error: Error) => error,
  );
const agentCount = (accountId: string) => prismaOf(app).agent.count({ where: { accountId } });

describe("an agent's caller ID and its account's carrier", () => {
  it('is refused on create and on a new caller ID when the carrier lists numbers and it is not one', async () => {
    const agency = await createTenant(app.storage);
    await setTwilio(agency.accountId);
    const before = await agentCount(agency.accountId);
    const refused = await refusal(create(agency.accountId, UNLISTED));
    expect(refused).toBeInstanceOf(CallerIdNotOnCarrier);
    expect(refused!.message).toBe(
      `${UNLISTED} is not a number of this account's Twilio account: use one of ${TWILIO_NUMBERS.join(', ')}`,
    );
    expect((refused as CallerIdNotOnCarrier).field).toBe('phone');
    expect(await agentCount(agency.accountId)).toBe(before);

    const { id } = await create(agency.accountId, TWILIO_NUMBERS[1]!);
    const changed = await refusal(
      updateAgent(app.storage, id, { phone: UNLISTED, name: 'Renamed', now: app.now() }, OPERATOR),
    );
    expect(changed).toBeInstanceOf(CallerIdNotOnCarrier);
    const stored = await prismaOf(app).agent.findUniqueOrThrow({ where: { id } });
    expect({ name: stored.name, phone: stored.phoneNumber }).toEqual({
      name: `Agent ${TWILIO_NUMBERS[1]}`,
      phone: TWILIO_NUMBERS[1],
    });
    await updateAgent(app.storage, id, { phone: TWILIO_NUMBERS[0], now: app.now() }, OPERATOR);
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id } })).phoneNumber).toBe(TWILIO_NUMBERS[0]);
    // No caller ID at all is no number of another carrier.
    await updateAgent(app.storage, id, { phone: null, now: app.now() }, OPERATOR);
  });

  it("checks a client's agents against its agency's carrier; not an agent whose number was listed before", async () => {
    const agency = await createTenant(app.storage);
    // Its agent's number (the fixtures' +14155550100) is listed; a client's agent with another number was made before.
    const client = await createClientTenant(app.storage, agency.accountId, { phone: UNLISTED });
    await setTwilio(agency.accountId);
    expect(await refusal(create(client.accountId, UNLISTED))).toBeInstanceOf(CallerIdNotOnCarrier);
    // The carrier no longer lists the client's agent's number: a change of its other fields is not blocked.
    await updateAgent(app.storage, client.agentId, { name: 'Renamed', phone: UNLISTED, now: app.now() }, OPERATOR);
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id: client.agentId } })).name).toBe('Renamed');
  });

  it("checks nothing on the environment's carrier, or on a carrier that does not list numbers", async () => {
    const agency = await createTenant(app.storage);
    expect((await create(agency.accountId, UNLISTED)).id).toBeTruthy();
    standIn.hideNumbers = true;
    try {
      await setTwilio(agency.accountId);
    } finally {
      standIn.hideNumbers = false;
    }
    expect((await create(agency.accountId, '+14155559877')).id).toBeTruthy();
    await setTwilio(agency.accountId);
    expect(await refusal(create(agency.accountId, '+14155559878'))).toBeInstanceOf(CallerIdNotOnCarrier);
    await removeCarrier(app.storage, agency.accountId, OPERATOR, app.now());
    expect((await create(agency.accountId, '+14155559878')).id).toBeTruthy();
  });
});
