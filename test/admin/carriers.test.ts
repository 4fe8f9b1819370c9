// An account's own carrier (src/admin/carriers.ts): set for Twilio, Telnyx or SignalWire, the credentials checked
// against a local stand-in of the carrier's API (a read of the account, then its numbers, page by page), stored sealed
// (the database holds no token in clear), never shown again, audited without the secret; refusals (a field, the
// carrier's 401 or 503, an unreachable carrier) name the problem and store nothing; a client uses its agency's carrier
// unless the agency lets clients choose; another tenant's user reaches nothing.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import {
  carrierInUse,
  removeCarrier,
  setCarrier,
  setClientsChooseCarrier,
  showCarrier,
  type CarrierView,
} from '../../src/admin/carriers.js';
import type { App } from '../../src/app.js';
import { checkCarrierAccount, type CarrierApiAddresses } from '../../src/dispatch/carrier-accounts.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import { forceCall } from '../helpers/seed.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'f00dfacef00dfacef00dfacef00dface';
const TELNYX_KEY = 'KEY0123456789ABCDEF_secretpartofthekey';
const TELNYX_PUBLIC = Buffer.alloc(32, 7).toString('base64');
const PROJECT = '3f6f3e3a-2b1c-4d5e-8f90-a1b2c3d4e5f6';
const SW_TOKEN = 'PT0123456789abcdef0123456789abcdef0123456789ab';

/** A stand-in of the three carriers' account reads: it knows one account of each and lists their numbers. */
interface StandIn {
  url: string;
  requests: string[];
  status: number | null;
}
let standIn: StandIn;
let server: Server;

function answer(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function handle(request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? '/', 'http://stand-in');
  standIn.requests.push(`${request.method} ${url.pathname}${url.search}`);
  if (standIn.status !== null) return answer(response, standIn.status, { message: 'as told' });
  const auth = request.headers.authorization ?? '';
  const laml = (user: string, password: string) =>
    auth === `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const twilioBase = `/2010-04-01/Accounts/${SID}`;
  const swBase = `/api/laml/2010-04-01/Accounts/${PROJECT}`;
  for (const [base, ok] of [
    [twilioBase, laml(SID, TOKEN)],
    [swBase, laml(PROJECT, SW_TOKEN)],
  ] as const) {
    if (!url.pathname.startsWith(base)) continue;
    if (!ok) return answer(response, 401, { code: 20003, message: 'Authenticate' });
    if (url.pathname === `${base}.json`) return answer(response, 200, { sid: SID, status: 'active' });
    if (url.pathname === `${base}/IncomingPhoneNumbers.json`) {
      const page = Number(url.searchParams.get('Page') ?? '0');
      return answer(response, 200, {
        incoming_phone_numbers: [{ phone_number: page === 0 ? '+14155550100' : '+14155550101' }],
        next_page_uri:
          page === 0 ? `${base.replace('/api/laml', '')}/IncomingPhoneNumbers.json?PageSize=1000&Page=1` : null,
      });
    }
  }
  if (url.pathname.startsWith('/v2/')) {
    if (auth !== `Bearer ${TELNYX_KEY}`) return answer(response, 401, { errors: [{ title: 'Authentication failed' }] });
    if (url.pathname === '/v2/call_control_applications/1234567890')
      return answer(response, 200, { data: { id: '1234567890' } });
    if (url.pathname === '/v2/phone_numbers') {
      const page = Number(url.searchParams.get('page[number]'));
      return answer(response, 200, {
        data: [{ phone_number: `+1202555010${page}` }],
        meta: { total_pages: 2, page_number: page },
      });
    }
  }
  answer(response, 404, { message: 'not found' });
}

let app: App;

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: [], status: null };
  ({ app } = await buildTestApp());
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const addresses = (): CarrierApiAddresses => ({
  twilioApiBaseUrl: standIn.url,
  telnyxApiBaseUrl: standIn.url,
  signalwireApiBaseUrl: standIn.url,
});
const SIMULATED = { provider: 'simulated' as const, shown: {} };
const show = (accountId: string) => showCarrier(app.storage, accountId, OPERATOR, SIMULATED);
const set = (accountId: string, provider: string, credentials: Record<string, string>, at = addresses()) =>
  setCarrier(app.storage, accountId, { provider, credentials }, OPERATOR, (c) => checkCarrierAccount(c, at), app.now());
/** The refusal's message (an AdminError), or "" when it was not refused. */
const refusal = (work: Promise<unknown>) =>
  work.then(
    () => '',
    (error: Error) => error.message,
  );
const rowOf = (accountId: string) => prismaOf(app).accountCarrier.findUnique({ where: { accountId } });
const twilio = { account_sid: SID, auth_token: TOKEN };
const telnyx = { api_key: TELNYX_KEY, public_key: TELNYX_PUBLIC, connection_id: '1234567890' };

describe("an account's carrier", () => {
  it("shows the service's default carrier for an account without its own", async () => {
    const agency = await createTenant(app.storage);
    expect(await show(agency.accountId)).toMatchObject({
      account_id: agency.accountId,
      provider: 'simulated',
      source: 'environment',
      numbers: null,
      clients_choose_carrier: false,
    } satisfies Partial<CarrierView>);
  });

  it('sets Twilio: checked at the carrier, its numbers listed page by page, the token sealed and never shown', async () => {
    const agency = await createTenant(app.storage);
    standIn.requests = [];
    const view = await set(agency.accountId, 'twilio', twilio);
    expect(JSON.stringify(view)).not.toContain(TOKEN);
    expect(view).toMatchObject({
      provider: 'twilio',
      source: 'account',
      shown: { account_sid: SID },
      numbers: ['+14155550100', '+14155550101'],
    });
    expect(standIn.requests).toEqual([
      `GET /2010-04-01/Accounts/${SID}.json`,
      `GET /2010-04-01/Accounts/${SID}/IncomingPhoneNumbers.json?PageSize=1000`,
      `GET /2010-04-01/Accounts/${SID}/IncomingPhoneNumbers.json?PageSize=1000&Page=1`,
    ]);
    const row = await rowOf(agency.accountId);
    expect(row!.credentials).toMatch(/^sealed\./);
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    // The dialer's read opens it.
    const used = await carrierInUse(app.storage, agency.accountId);
    expect(used?.carrier).toEqual({ provider: 'twilio', credentials: twilio });
    expect(JSON.stringify(await show(agency.accountId))).not.toContain(TOKEN);
    const audit = await prismaOf(app).auditEntry.findMany({
      where: { accountId: agency.accountId, action: 'carrier_set' },
      select: { actorKind: true, detail: true },
    });
    expect(audit).toEqual([
      { actorKind: 'operator', detail: { before: null, after: { provider: 'twilio', account_sid: SID } } },
    ]);
  });

  it('sets Telnyx and SignalWire: each checked with its own API and credentials', async () => {
    const agency = await createTenant(app.storage);
    expect(await set(agency.accountId, 'telnyx', telnyx)).toMatchObject({
      provider: 'telnyx',
      shown: { public_key: TELNYX_PUBLIC, connection_id: '1234567890' },
      numbers: ['+12025550101', '+12025550102'],
    });
    const signalwire = {
      space_url: 'https://example-space.signalwire.com',
      project_id: PROJECT,
      token: SW_TOKEN,
      signing_key: 'PSK_0123456789abcdef',
    };
    expect(await set(agency.accountId, 'signalwire', signalwire)).toMatchObject({
      provider: 'signalwire',
      shown: { space_url: 'https://example-space.signalwire.com', project_id: PROJECT },
      numbers: ['+14155550100', '+14155550101'],
    });
    const row = JSON.stringify(await rowOf(agency.accountId));
    expect(row).not.toContain(SW_TOKEN);
    expect(row).not.toContain('PSK_0123456789abcdef');
  });

  it('refuses what the carrier refuses, a bad field, an unknown carrier and an unreachable one; stores nothing', async () => {
    const agency = await createTenant(app.storage);
    const id = agency.accountId;
    expect(await refusal(set(id, 'twilio', { ...twilio, auth_token: 'a'.repeat(32) }))).toBe(
      'Twilio did not accept these credentials: it refused these credentials (HTTP 401)',
    );
    expect(await refusal(set(id, 'twilio', { ...twilio, account_sid: 'AC12' }))).toMatch(
      /^account_sid is not valid: expected Account SID/,
    );
    expect(await refusal(set(id, 'telnyx', { api_key: TELNYX_KEY }))).toMatch(/^public_key is required/);
    expect(await refusal(set(id, 'twilio', { ...twilio, token: SW_TOKEN }))).toBe('Twilio takes no token');
    expect(await refusal(set(id, 'vonage', {}))).toBe('Unknown carrier "vonage": expected twilio, telnyx, signalwire');
    standIn.status = 503;
    try {
      expect(await refusal(set(id, 'twilio', twilio))).toBe(
        'Twilio did not accept these credentials: it answered HTTP 503',
      );
    } finally {
      standIn.status = null;
    }
    const away = await refusal(set(id, 'twilio', twilio, { ...addresses(), twilioApiBaseUrl: 'http://127.0.0.1:9' }));
    expect(away).toMatch(/^Twilio could not be reached to check these credentials: /);
    expect(away).not.toContain(TOKEN);
    expect(await rowOf(id)).toBeNull();
    expect(await prismaOf(app).auditEntry.count({ where: { accountId: id } })).toBe(0);
  });

  it("a client uses its agency's carrier until the agency lets clients choose; then its own; remove goes back", async () => {
    const agency = await createTenant(app.storage);
    const client = await createClientTenant(app.storage, agency.accountId);
    await set(agency.accountId, 'twilio', twilio);
    expect(await show(client.accountId)).toMatchObject({ provider: 'twilio', source: 'agency' });
    // The operator may set it, but it is not used while the agency does not let clients choose.
    await set(client.accountId, 'telnyx', telnyx);
    expect((await carrierInUse(app.storage, client.accountId))?.provider).toBe('twilio');
    await setClientsChooseCarrier(app.storage, agency.accountId, true, OPERATOR, app.now());
    expect((await carrierInUse(app.storage, client.accountId))?.provider).toBe('telnyx');
    expect(await show(client.accountId)).toMatchObject({ provider: 'telnyx', source: 'account' });
    expect(await removeCarrier(app.storage, client.accountId, OPERATOR, app.now())).toBe(true);
    expect((await carrierInUse(app.storage, client.accountId))?.provider).toBe('twilio');
    expect(await removeCarrier(app.storage, client.accountId, OPERATOR, app.now())).toBe(false);
    expect(await refusal(setClientsChooseCarrier(app.storage, client.accountId, true, OPERATOR, app.now()))).toBe(
      'Only an agency lets its clients choose their carrier',
    );
  });

  it("a user reaches only their scope: a client's user sets its carrier only while the agency allows", async () => {
    const agency = await createTenant(app.storage);
    const client = await createClientTenant(app.storage, agency.accountId);
    const stranger = await createTenant(app.storage);
    const check = async () => ({ ok: true as const, numbers: null });
    const input = { provider: 'twilio', credentials: twilio };
    const clientUser = {
      kind: 'user' as const,
      userId: '00000000-0000-4000-8000-000000000001',
      ip: null,
      scope: { accountId: client.accountId, kind: 'client' as const },
    };
    const strangerUser = { ...clientUser, scope: { accountId: stranger.accountId, kind: 'agency' as const } };
    expect(await refusal(setCarrier(app.storage, client.accountId, input, strangerUser, check, app.now()))).toBe(
      `No account ${client.accountId}`,
    );
    expect(await refusal(showCarrier(app.storage, agency.accountId, strangerUser, SIMULATED))).toBe(
      `No account ${agency.accountId}`,
    );
    expect(await refusal(setCarrier(app.storage, client.accountId, input, clientUser, check, app.now()))).toBe(
      'Your agency sets the carrier of this account: ask it to let clients choose their own',
    );
    expect(await rowOf(client.accountId)).toBeNull();
  });
  it('keeps the carrier calls are live on: no removal or move to another account until they end; a new token is fine', async () => {
    const agency = await createTenant(app.storage);
    await set(agency.accountId, 'twilio', twilio);
    // A call the dispatcher leaves alone (due tomorrow), then made live on the agency's carrier.
    const scheduledAt = new Date(app.now().getTime() + 86_400_000).toISOString();
    const callId = callIdOf(
      await trigger(app, agency.key, { phone_number: '+14155550177', scheduled_at: scheduledAt }),
    );
    await forceCall(prismaOf(app), callId, {
      status: 'in_progress',
      carrier: 'twilio',
      carrierAccountId: agency.accountId,
    });
    const live = '1 call is live on this carrier';
    expect(await refusal(removeCarrier(app.storage, agency.accountId, OPERATOR, app.now()))).toBe(
      `${live}: remove it once it has ended`,
    );
    expect(await refusal(set(agency.accountId, 'telnyx', telnyx))).toBe(
      `${live}: change it to another account once it has ended`,
    );
    expect((await rowOf(agency.accountId))?.provider).toBe('twilio');
    // The same account with a rotated token: its callbacks are signed with the new one.
    expect(await refusal(set(agency.accountId, 'twilio', twilio))).toBe('');
    await forceCall(prismaOf(app), callId, { status: 'completed', endedAt: app.now() });
    expect(await refusal(removeCarrier(app.storage, agency.accountId, OPERATOR, app.now()))).toBe('');
    expect(await rowOf(agency.accountId)).toBeNull();
  });
});
