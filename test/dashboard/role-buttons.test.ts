// Each role sees only what it can do (src/views/pages/layout.ts `can`): every page, rendered as an owner, an admin, a
// member and a viewer of one agency, offers a form, button or link to a route exactly when the route's declared role
// (config.role, plugins/dashboard/roles.ts) lets that role through in the account the page acts in. The expected set
// is the owner's page filtered by each route's declaration, so a template that shows a button to a role the route
// refuses, or hides one from a role it allows, fails; and the owner's pages together must offer every such route.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { createAgent, setAgentArchived, setDefaultAgent } from '../../src/admin/agents.js';
import { putCallingHours } from '../../src/admin/calling-rules.js';
import { setCarrier, setClientsChooseCarrier } from '../../src/admin/carriers.js';
import { addToDoNotCall } from '../../src/admin/do-not-call.js';
import { createUser, disableUser } from '../../src/admin/users.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { hasRole, roleIn, ROLES, type Role } from '../../src/domain/roles.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';
import { buildProbeApp } from './probe-app.js';
import { prismaOf } from '../helpers/app.js';
import { agentOf } from '../helpers/fixtures.js';
import { forceEndpoint, insertCalls, insertFailedDelivery, insertWaitingCall } from '../helpers/seed.js';

let app: App;
/** Each dashboard route ("METHOD /dashboard/...") and the least role it declares. */
const declared = new Map<string, Role>();
const visitors = {} as Record<Role, Visitor>;
const world = { A: '', A1: '', waiting: '', clientCall: '', kept: '', archived: '' };

/** A page, and the account it acts in: the agency's own, or its client A1's. */
interface Page {
  name: string;
  path: () => string;
  place: 'own' | 'client';
}
const PAGES: Page[] = [
  { name: 'Overview', path: () => '/dashboard', place: 'own' },
  { name: 'Calls list', path: () => '/dashboard/calls', place: 'own' },
  { name: 'a waiting call', path: () => `/dashboard/calls/${world.waiting}`, place: 'own' },
  {
    name: "a client's call with a failed delivery",
    path: () => `/dashboard/calls/${world.clientCall}`,
    place: 'client',
  },
  { name: 'Agents list', path: () => '/dashboard/agents', place: 'own' },
  { name: 'an agent', path: () => `/dashboard/agents/${world.kept}`, place: 'own' },
  { name: 'an archived agent', path: () => `/dashboard/agents/${world.archived}`, place: 'own' },
  { name: 'API & Webhooks', path: () => '/dashboard/settings/api-webhooks', place: 'own' },
  { name: 'delivery log', path: () => '/dashboard/settings/api-webhooks/deliveries', place: 'own' },
  { name: 'Do-not-call', path: () => '/dashboard/do-not-call', place: 'own' },
  { name: 'Calling rules', path: () => '/dashboard/calling-rules', place: 'own' },
  { name: 'Users', path: () => '/dashboard/users', place: 'own' },
  { name: 'Account', path: () => '/dashboard/account', place: 'own' },
  { name: 'Audit log', path: () => '/dashboard/audit-log', place: 'own' },
  { name: 'Clients list', path: () => '/dashboard/clients', place: 'own' },
  { name: 'a client', path: () => `/dashboard/clients/${world.A1}`, place: 'client' },
  { name: "a client's API & Webhooks", path: () => `/dashboard/clients/${world.A1}/api-webhooks`, place: 'client' },
  {
    name: "a client's delivery log",
    path: () => `/dashboard/clients/${world.A1}/api-webhooks/deliveries`,
    place: 'client',
  },
  { name: "a client's do-not-call", path: () => `/dashboard/clients/${world.A1}/do-not-call`, place: 'client' },
  { name: "a client's calling rules", path: () => `/dashboard/clients/${world.A1}/calling-rules`, place: 'client' },
  { name: 'Carrier', path: () => '/dashboard/settings/carrier', place: 'own' },
  { name: "a client's carrier", path: () => `/dashboard/clients/${world.A1}/carrier`, place: 'client' },
];

/**
 * Routes above the viewer's role that no page above offers to its owner: the forms of pages that are themselves above
 * the viewer's role (the new agent page, the key and webhook pages), which a lesser role never reaches; and, as an
 * endpoint cannot be both disabled (Enable again) and resendable, the agency's resends and the client's Enable again
 * (the same templates offer them on the other account).
 */
const OFFERED_ELSEWHERE = [
  'POST /dashboard/agents',
  'POST /dashboard/settings/api-webhooks/key',
  'POST /dashboard/settings/api-webhooks/webhook',
  'POST /dashboard/clients/:id/api-webhooks/key',
  'POST /dashboard/clients/:id/api-webhooks/webhook',
  'POST /dashboard/settings/api-webhooks/deliveries/:deliveryId/resend',
  'POST /dashboard/settings/api-webhooks/deliveries/resend-failed',
  'POST /dashboard/clients/:id/api-webhooks/webhook/enable',
];

/** The declared route a request of `method` to `path` reaches (a static segment wins over a parameter), or null. */
function routeOf(method: string, path: string): string | null {
  let best: { route: string; params: number } | null = null;
  for (const route of declared.keys()) {
    const [m, pattern = ''] = route.split(' ');
    if (m !== method) continue;
    const source = pattern.replace(/[.]/g, '\\.').replace(/:[A-Za-z]+/g, '[^/]+');
    if (!new RegExp(`^${source}/?$`).test(path)) continue;
    const params = (pattern.match(/:/g) ?? []).length;
    if (!best || params < best.params) best = { route, params };
  }
  return best?.route ?? null;
}

/** Every form and link of a page that leads to a dashboard route of a signed-in user: "METHOD path" -> its route. */
function actionsOf(body: string): Map<string, string> {
  const found = new Map<string, string>();
  const add = (method: string, target: string) => {
    const path = target.replace(/&amp;/g, '&').split(/[?#]/)[0] ?? '';
    if (!path.startsWith('/dashboard')) return;
    const route = routeOf(method, path);
    if (route && declared.get(route)) found.set(`${method} ${path}`, route);
  };
  for (const [tag] of body.matchAll(/<form\b[^>]*>/g)) {
    const method = (/\bmethod="([^"]*)"/.exec(tag)?.[1] ?? 'get').toUpperCase();
    const action = /\baction="([^"]*)"/.exec(tag)?.[1];
    if (action) add(method, action);
  }
  for (const [, href = ''] of body.matchAll(/<a\b[^>]*\bhref="([^"]*)"/g)) add('GET', href);
  return found;
}

/** The role `role` of agency A has where an action of a `place` page acts (an invitation: its best in the scope). */
function roleThere(role: Role, place: Page['place'], route: string): Role {
  const user = { accountId: world.A, role };
  if (route === 'POST /dashboard/users/invite')
    return [world.A, world.A1]
      .map((account) => roleIn(user, account))
      .sort((a, b) => ROLES.indexOf(b) - ROLES.indexOf(a))[0]!;
  return roleIn(user, place === 'own' ? world.A : world.A1);
}

const pages = new Map<string, Record<Role, string>>();
async function pageAs(page: Page): Promise<Record<Role, string>> {
  const path = page.path();
  if (!pages.has(path)) {
    const bodies = {} as Record<Role, string>;
    for (const role of ROLES) {
      const res = await visitors[role].get(path);
      expect(res.status, `${role} ${path}`).toBe(200);
      bodies[role] = res.body;
    }
    pages.set(path, bodies);
  }
  return pages.get(path)!;
}

beforeAll(async () => {
  const built = await buildProbeApp(
    (scope) => scope.dashboardGuards.requireUser,
    // A public address: without one no carrier could call back, and the Carrier page offers no form.
    { ...DASHBOARD_ENV, PUBLIC_BASE_URL: 'https://calls.buttons.example' },
    () => new Date(),
  );
  app = built.probe;
  for (const [route, role] of built.roles)
    if (route.includes(' /dashboard') && role !== 'public') declared.set(route, role as Role);
  const storage = app.storage;
  const prisma = prismaOf(app);
  const now = () => app.now();
  const operator = { kind: 'operator' } as const;
  world.A = (await createAgency(storage, { name: 'Buttons Agency' })).id;
  world.A1 = (await createClient(storage, { agencyId: world.A, name: 'Buttons Client', now: now() })).id;
  // Agents: a default, one that is not (Set as default, Archive), one archived (Restore).
  const first = await agentOf(prisma, world.A);
  await setDefaultAgent(storage, world.A, first, undefined, now());
  world.kept = (await createAgent(storage, { accountId: world.A, name: 'Kept', now: now() })).id;
  world.archived = (await createAgent(storage, { accountId: world.A, name: 'Old', now: now() })).id;
  await setAgentArchived(storage, world.archived, true, undefined, now());
  // A call still waiting (Cancel); the client's finished call with a failed delivery (Resend), its endpoint enabled.
  world.waiting = await insertWaitingCall(prisma, world.A, first);
  const clientAgent = await agentOf(prisma, world.A1);
  const [clientCall = ''] = await insertCalls(prisma, {
    accountId: world.A1,
    agentId: clientAgent,
    count: 1,
    createdAt: now(),
  });
  world.clientCall = clientCall;
  await insertFailedDelivery(prisma, world.A1, clientCall);
  // The agency's endpoint disabled (Enable again).
  await setWebhook(storage, world.A, 'http://127.0.0.1:9/agency', { allowPrivate: true, now: now() });
  await forceEndpoint(prisma, { accountId: world.A }, { enabled: false, disabledReason: 'it answered 410 Gone' });
  for (const accountId of [world.A, world.A1]) {
    await addToDoNotCall(storage, { accountId, phoneNumber: '+14155550199', actor: operator, now: now() });
    await putCallingHours(storage, {
      accountId,
      hours: { name: 'Office', days: 'mon', from: '09:00', to: '17:00' },
      actor: operator,
      now: now(),
    });
  }
  // Carriers of their own (Remove), the client's while the agency lets clients choose (the switch).
  const twilio = {
    provider: 'twilio',
    credentials: { account_sid: `AC${'0'.repeat(32)}`, auth_token: 'b'.repeat(32) },
  };
  const accepted = async () => ({ ok: true as const, numbers: null });
  await setCarrier(storage, world.A, twilio, operator, accepted, now());
  await setClientsChooseCarrier(storage, world.A, true, operator, now());
  await setCarrier(storage, world.A1, twilio, operator, accepted, now());
  // A disabled user (Enable) beside the four signed in.
  const gone = await createUser(storage, {
    accountId: world.A,
    email: 'gone@buttons.example',
    role: 'member',
    actor: operator,
    now: now(),
  });
  await disableUser(storage, gone.id, operator, now());
  for (const [i, role] of ROLES.entries()) {
    const email = `${role}@buttons.example`;
    const id = await createUserWithPassword(storage, world.A, email);
    await prisma.user.update({ where: { id }, data: { role } });
    visitors[role] = new Visitor(app);
    visitors[role].ip = `10.9.2.${i + 1}`;
    expect((await visitors[role].signIn(email)).status).toBe(303);
  }
});

describe('each role sees only what it can do', () => {
  for (const page of PAGES)
    it(`${page.name}: each action is offered exactly to the roles its route lets through`, async () => {
      const bodies = await pageAs(page);
      const all = actionsOf(bodies.owner);
      for (const role of ROLES) {
        const expected = [...all]
          .filter(([, route]) => hasRole(roleThere(role, page.place, route), declared.get(route)!))
          .map(([action]) => action)
          .sort();
        expect([...actionsOf(bodies[role]).keys()].sort(), `as ${role}`).toEqual(expected);
      }
    });

  it("offers, on the owner's pages, every route above the viewer's role", async () => {
    const offered = new Set<string>();
    for (const page of PAGES) for (const route of actionsOf((await pageAs(page)).owner).values()) offered.add(route);
    const above = [...declared].filter(([, role]) => role !== 'viewer').map(([route]) => route);
    expect(above.filter((route) => !offered.has(route)).sort()).toEqual([...OFFERED_ELSEWHERE].sort());
  });

  it('tells a viewer, where a whole section is an action, which role it needs', async () => {
    const settings = (await pageAs(PAGES.find((p) => p.name === 'API & Webhooks')!)).viewer;
    expect(settings).toContain(html('Only an admin can change the webhook.'));
    expect(settings).toContain(html('Only an admin can switch API access.'));
    const users = (await pageAs(PAGES.find((p) => p.name === 'Users')!)).viewer;
    expect(users).toContain(html('Only an owner can invite users and change their roles.'));
    const agent = (await pageAs(PAGES.find((p) => p.name === 'an agent')!)).viewer;
    // The agent's settings, read only: its values in a disabled fieldset, no form to send.
    expect(agent).toMatch(/<fieldset class="stack wide agent-settings" disabled/);
    expect(agent).toContain('value="Kept"');
    expect(agent).not.toMatch(/<form[^>]*agent-form/);
  });
});
