// Settings → Carrier through the real app (issue 50, points 3 and 7): the account's carrier shown (the service's
// default, the agency's, its own, with its numbers); an owner sets one checked at a local stand-in of the carrier,
// stored sealed and audited as theirs, the secret in no response; a bad field is refused beside it and a refused
// credential above the form, nothing stored and no secret sent back; a viewer sees no form or button and is refused
// with the 403 page; a client's users set their own only once the agency lets them; an agent's caller ID the carrier
// does not list is refused beside the caller-ID field. Roles and tenancy of every route are also in roles.test.ts and
// tenancy.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import {
  CARRIER_SID,
  CARRIER_TELNYX_CONNECTION,
  CARRIER_TELNYX_KEY,
  CARRIER_TELNYX_PUBLIC,
  CARRIER_TOKEN,
  CarrierAccountsStandIn,
  TELNYX_NUMBERS,
  TWILIO_NUMBERS,
} from '../helpers/carrier-accounts-stand-in.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

let app: App;
const standIn = new CarrierAccountsStandIn();
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const visitors = {} as Record<'owner' | 'viewer' | 'client' | 'outsider', Visitor>;

beforeAll(async () => {
  await standIn.start();
  ({ app } = await buildTestApp({ env: { ...DASHBOARD_ENV, ...standIn.env() } }));
  tenants.A = await createTenant(app.storage);
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client One' });
  tenants.B = await createTenant(app.storage);
  const people = [
    ['owner', tenants.A, 'owner'],
    ['viewer', tenants.A, 'viewer'],
    ['client', tenants.A1, 'owner'],
    ['outsider', tenants.B, 'owner'],
  ] as const;
  for (const [i, [name, tenant, role]] of people.entries()) {
    const id = await createUserWithPassword(app.storage, tenant.accountId, `${name}@carrier.example`);
    await prismaOf(app).user.update({ where: { id }, data: { role } });
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.7.0.${i + 1}`;
    expect((await visitors[name].signIn(`${name}@carrier.example`)).status).toBe(303);
  }
});

const OWN = '/dashboard/settings/carrier';
const clientPage = () => `/dashboard/clients/${tenants.A1.accountId}/carrier`;
const rowOf = (tenant: Tenant) => prismaOf(app).accountCarrier.findUnique({ where: { accountId: tenant.accountId } });
const notice = (body: string) => /<p class="notice ok" role="status">([^<]*)<\/p>/.exec(body)?.[1];
const fieldError = (body: string, id: string) =>
  new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(body)?.[1];
const TWILIO = { provider: 'twilio', account_sid: CARRIER_SID, auth_token: CARRIER_TOKEN };
/** Every secret the tests type: none may be in any response. */
const SECRETS = [CARRIER_TOKEN, CARRIER_TELNYX_KEY, 'b'.repeat(32)];
const noSecretIn = (body: string) => {
  for (const secret of SECRETS) expect(body).not.toContain(secret);
};

describe('Settings → Carrier', () => {
  it("shows the service's default to a viewer with no form or button, and the forms to an owner", async () => {
    const viewer = await visitors.viewer.get(OWN);
    expect(viewer.status).toBe(200);
    expect(viewer.body).toContain('<a href="/dashboard/settings/carrier"');
    expect(viewer.body).toContain('The service&#39;s default carrier');
    expect(viewer.body).toContain("Not read for the service's default carrier");
    expect(viewer.body).not.toContain(`action="${OWN}"`);
    expect(viewer.body).not.toContain(`action="${OWN}/clients-choose"`);
    expect(viewer.body).toContain('Every client&#39;s calls go through the agency&#39;s carrier');
    const refused = await visitors.viewer.submit(OWN, OWN, TWILIO);
    expect(refused.status).toBe(403);
    expect(await rowOf(tenants.A)).toBeNull();

    const owner = await visitors.owner.get(OWN);
    for (const provider of ['twilio', 'telnyx', 'signalwire'])
      expect(owner.body).toContain(`<input type="hidden" name="provider" value="${provider}">`);
    expect(owner.body).toMatch(/<input id="f-twilio-auth_token" type="password" name="auth_token" value=""/);
    expect(owner.body).toMatch(/<input id="f-signalwire-signing_key" type="password" name="signing_key" value=""/);
    expect(owner.body).toContain(`action="${OWN}/clients-choose"`);
  });

  it('refuses a bad field beside it and a refused credential above the form; nothing stored, no secret sent back', async () => {
    const bad = await visitors.owner.submit(OWN, OWN, { ...TWILIO, account_sid: 'AC12' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'f-twilio-account_sid')).toMatch(/^account_sid is not valid: expected Account SID/);
    expect(bad.body).toMatch(/<input id="f-twilio-account_sid" type="text" name="account_sid" value="AC12"/);
    expect(bad.body).toMatch(/<input id="f-twilio-auth_token" type="password" name="auth_token" value=""/);
    noSecretIn(bad.body);

    const wrong = await visitors.owner.submit(OWN, OWN, { ...TWILIO, auth_token: 'b'.repeat(32) });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain(
      html('Twilio did not accept these credentials: it refused these credentials (HTTP 401)'),
    );
    expect(wrong.body).toContain(`value="${CARRIER_SID}"`);
    noSecretIn(wrong.body);
    expect(await rowOf(tenants.A)).toBeNull();
    expect(
      await prismaOf(app).auditEntry.count({ where: { accountId: tenants.A.accountId, action: 'carrier_set' } }),
    ).toBe(0);
  });

  it('an owner sets Twilio: checked at the carrier, shown with its numbers, sealed, audited, the token never sent', async () => {
    const set = await visitors.owner.submit(OWN, OWN, TWILIO);
    expect(set.status).toBe(303);
    const page = await visitors.owner.get(set.location!);
    expect(notice(page.body)).toBe(
      html("Saved: Twilio accepted these credentials and places this account's calls from now on. It lists 2 numbers."),
    );
    expect(page.body).toContain('The agency&#39;s own carrier');
    expect(page.body).toContain(`<code>${CARRIER_SID}</code>`);
    expect(page.body).toContain(TWILIO_NUMBERS.join(', '));
    expect(page.body).toContain('Remove this carrier');
    noSecretIn(page.body);
    const row = await rowOf(tenants.A);
    expect(row!.credentials).toMatch(/^sealed\./);
    expect(JSON.stringify(row)).not.toContain(CARRIER_TOKEN);
    const audit = await prismaOf(app).auditEntry.findMany({
      where: { accountId: tenants.A.accountId, action: 'carrier_set' },
      select: { actorKind: true, ip: true, detail: true },
    });
    expect(audit).toEqual([
      {
        actorKind: 'user',
        ip: visitors.owner.ip,
        detail: { before: null, after: { provider: 'twilio', account_sid: CARRIER_SID } },
      },
    ]);
    // The viewer sees it, and no button.
    const viewer = await visitors.viewer.get(OWN);
    expect(viewer.body).toContain(TWILIO_NUMBERS.join(', '));
    expect(viewer.body).not.toContain('Remove this carrier');
  });

  it("refuses an agent's caller ID the carrier does not list, beside the caller-ID field", async () => {
    const form = { name: 'Off the carrier', phone: '+14155559876', timezone: 'Europe/Paris', policy: 'queue' };
    const refused = await visitors.owner.submit('/dashboard/agents/new', '/dashboard/agents', {
      ...form,
      account: tenants.A.accountId,
    });
    expect(refused.status).toBe(400);
    expect(fieldError(refused.body, 'f-phone')).toBe(
      html(`+14155559876 is not a number of this account's Twilio account: use one of ${TWILIO_NUMBERS.join(', ')}`),
    );
    expect(await prismaOf(app).agent.count({ where: { name: 'Off the carrier' } })).toBe(0);
    const listed = await visitors.owner.submit('/dashboard/agents/new', '/dashboard/agents', {
      ...form,
      phone: TWILIO_NUMBERS[1]!,
      account: tenants.A.accountId,
    });
    expect(listed.status).toBe(303);
  });

  it("a client uses the agency's carrier; its users set their own once the agency lets them", async () => {
    const before = await visitors.client.get('/dashboard/settings/carrier');
    expect(before.body).toContain('The agency&#39;s carrier');
    expect(before.body).toContain('The agency sets the carrier of this account');
    expect(before.body).not.toContain('name="provider"');
    const refused = await visitors.client.submit(OWN, OWN, TWILIO);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain(
      html('Your agency sets the carrier of this account: ask it to let clients choose their own'),
    );
    noSecretIn(refused.body);
    expect(await rowOf(tenants.A1)).toBeNull();
    // The agency's users see the client's page with the forms, and why a carrier set there waits.
    const detail = await visitors.owner.get(`/dashboard/clients/${tenants.A1.accountId}`);
    expect(detail.body).toContain(`<a href="${clientPage()}">`);
    const fromAgency = await visitors.owner.get(clientPage());
    expect(fromAgency.status).toBe(200);
    expect(fromAgency.body).toContain('The agency does not let its clients choose their carrier');
    expect((await visitors.outsider.get(clientPage())).status).toBe(404);

    const on = await visitors.owner.submit(OWN, `${OWN}/clients-choose`);
    expect(on.status).toBe(303);
    expect(notice((await visitors.owner.get(OWN)).body)).toBe('Clients may now set a carrier of their own.');
    const telnyx = {
      provider: 'telnyx',
      api_key: CARRIER_TELNYX_KEY,
      connection_id: CARRIER_TELNYX_CONNECTION,
      public_key: CARRIER_TELNYX_PUBLIC,
    };
    const set = await visitors.client.submit(OWN, OWN, telnyx);
    expect(set.status).toBe(303);
    const page = await visitors.client.get(OWN);
    expect(page.body).toContain('Client One&#39;s own carrier');
    expect(page.body).toContain(TELNYX_NUMBERS[0]);
    noSecretIn(page.body);
    expect((await visitors.client.submit(OWN, `${OWN}/clients-choose`, { allowed: 'off' })).status).toBe(404);

    const removed = await visitors.client.submit(OWN, `${OWN}/remove`);
    expect(removed.status).toBe(303);
    const after = await visitors.client.get(OWN);
    expect(notice(after.body)).toBe(
      html("Removed: calls now go through the agency's carrier, or the service's default."),
    );
    expect(after.body).toContain('The agency&#39;s carrier');
    expect(await rowOf(tenants.A1)).toBeNull();
  });
});
