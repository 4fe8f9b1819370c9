// The waiting calls the calling rules hold, counted on the Overview for the viewer's scope (issue 48: "every held call
// is visible as such ... and counted on the Overview") and linked to the Calls list of them; never another tenant's.
// And the first-run checklist's recommendation to an agency to switch its calling rules on, which a client's
// checklist never has (the rules are the agency's).
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceCall, insertHeldCalls, setCallingRulesEnabled } from '../helpers/seed.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

const NOW = new Date('2057-06-04T15:00:00Z');
let app: App;
let agency: Tenant;
let client: Tenant;
let other: Tenant;
let n = 0;

/** A signed-in user of `accountId`. */
async function userOf(accountId: string): Promise<Visitor> {
  const email = `held-${n++}@example.com`;
  await createUserWithPassword(app.storage, accountId, email);
  const visitor = new Visitor(app);
  visitor.ip = `10.10.0.${n}`;
  expect((await visitor.signIn(email)).status).toBe(303);
  return visitor;
}

/** The Overview's sentence on held calls, its tags taken out; null when it has none. */
async function heldOn(visitor: Visitor): Promise<string | null> {
  const { body } = await visitor.get('/dashboard');
  const p = /<p id="held-calls">([^]*?)<\/p>/.exec(body)?.[1];
  return p === undefined ? null : p.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
}

const held = (tenant: Tenant, count: number, heldBy: 'calling_rules' | 'cap' | null) =>
  insertHeldCalls(prismaOf(app), { accountId: tenant.accountId, agentId: tenant.agentId, count, heldBy, at: NOW });

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => NOW }));
  agency = await createTenant(app.storage, { name: 'Holding Agency' });
  client = await createClientTenant(app.storage, agency.accountId, { name: 'Holding Client' });
  other = await createTenant(app.storage, { name: 'Other Agency' });
  // The agency: 2 held for the hours; its client: 1 over a cap and 2 waiting, not held; the other tenant: 7 held.
  await held(agency, 2, 'calling_rules');
  await held(client, 1, 'cap');
  await held(client, 2, null);
  await held(other, 7, 'calling_rules');
});

describe('the Overview counts the calls the calling rules hold', () => {
  it("counts the scope's held calls only, and links to the Calls list of them", async () => {
    const agencyUser = await userOf(agency.accountId);
    expect(await heldOn(agencyUser)).toBe(
      'Held by the calling rules: 3 waiting calls (1 over a cap per number), your agency and all its clients. They ' +
        'wait until the rules allow them, within their time to live.',
    );
    expect((await agencyUser.get('/dashboard')).body).toContain(`<a href="${html('/dashboard/calls?held=yes')}">`);
    expect(await heldOn(await userOf(client.accountId))).toBe(
      'Held by the calling rules: 1 waiting call (1 over a cap per number). They wait until the rules allow them, ' +
        'within their time to live.',
    );
    expect(await heldOn(await userOf(other.accountId))).toMatch(/^Held by the calling rules: 7 waiting calls,/);
  });

  it('follows a held call that is let go or ends', async () => {
    const [id] = await held(client, 1, 'calling_rules');
    const clientUser = await userOf(client.accountId);
    expect(await heldOn(clientUser)).toMatch(/: 2 waiting calls \(1 over a cap per number\)\./);
    await forceCall(prismaOf(app), id!, { heldBy: null });
    expect(await heldOn(clientUser)).toMatch(/: 1 waiting call \(1 over a cap per number\)\./);
    await forceCall(prismaOf(app), id!, { heldBy: 'calling_rules', status: 'failed' });
    expect(await heldOn(clientUser)).toMatch(/: 1 waiting call \(/);
  });

  it('says nothing while none is held and the rules are off, and shows 0 to an agency that switched them on', async () => {
    const { id: quiet } = await createAgency(app.storage, { name: 'Quiet Agency' });
    const quietUser = await userOf(quiet);
    expect(await heldOn(quietUser)).toBeNull();
    await setCallingRulesEnabled(prismaOf(app), quiet, true);
    expect(await heldOn(quietUser)).toMatch(/^Held by the calling rules: 0 waiting calls, your agency/);
  });
});

describe("the first-run checklist's calling rules", () => {
  /** The checklist's items, their tags taken out; null without one. */
  const checklistOf = async (visitor: Visitor) => {
    const list = /<ol class="checklist" id="checklist">([^]*?)<\/ol>/.exec((await visitor.get('/dashboard')).body)?.[1];
    return list ? [...list.matchAll(/<li>([^]*?)<\/li>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim()) : null;
  };

  it('are recommended to an agency until it switches them on, and never to a client', async () => {
    const { id: fresh } = await createAgency(app.storage, { name: 'Fresh Agency' });
    const { id: freshClient } = await createClient(app.storage, { agencyId: fresh, name: 'Fresh Client', now: NOW });
    const agencyUser = await userOf(fresh);
    const clientUser = await userOf(freshClient);
    expect((await checklistOf(agencyUser))!.at(-1)).toBe(
      'Recommended Calling rules switched on: hours where the callee is, caps per number, consent on record ' +
        '(recommended; off until you switch them on)',
    );
    const ofClient = (await checklistOf(clientUser))!;
    expect(ofClient).toHaveLength(5);
    expect(ofClient.join(' ')).not.toContain('Calling rules');
    // Another agency's rules switched on do not tick this one's.
    await setCallingRulesEnabled(prismaOf(app), other.accountId, true);
    expect((await checklistOf(agencyUser))!.at(-1)).toMatch(/^Recommended Calling rules/);
    await setCallingRulesEnabled(prismaOf(app), fresh, true);
    expect((await checklistOf(agencyUser))!.at(-1)).toBe('Done Calling rules switched on');
    // Switched off again: recommended again.
    await setCallingRulesEnabled(prismaOf(app), fresh, false);
    expect((await checklistOf(agencyUser))!.at(-1)).toMatch(/^Recommended Calling rules/);
  });

  it('stay recommended to an agency that took every step to a first call, until it switches them on', async () => {
    // The tenant fixture takes three steps, a held call is its first call, and its endpoint the fourth.
    await setWebhook(app.storage, agency.accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: NOW });
    const agencyUser = await userOf(agency.accountId);
    expect(await checklistOf(agencyUser)).toEqual([
      'Done An agent with a phone number',
      'Done A default agent',
      'Done An API key',
      'Done A webhook endpoint',
      'Done A first call',
      'Recommended Calling rules switched on: hours where the callee is, caps per number, consent on record ' +
        '(recommended; off until you switch them on)',
    ]);
    await setCallingRulesEnabled(prismaOf(app), agency.accountId, true);
    expect(await checklistOf(agencyUser)).toBeNull();
  });
});
