// Roles, proven (src/domain/roles.ts, plugins/dashboard/roles.ts): every dashboard route declares who may use it and
// DECLARED below says the same (the first test fails for a route without a declaration, or one whose role changed
// unseen); each route above the viewer's role refuses every lesser role of the account with the 403 page naming the
// role needed, changing nothing, and lets its least role through; another tenant's object stays a 404 whatever the
// role. ADD EVERY NEW ROUTE TO DECLARED, and to ROLE_ROUTES when it needs more than the viewer's role.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient, setApiAccess } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import { putCallingHours } from '../../src/admin/calling-rules.js';
import { createUser } from '../../src/admin/users.js';
import type { App } from '../../src/app.js';
import { ROLES, roleNeeded, type Role, type RouteRole } from '../../src/domain/roles.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';
import { buildProbeApp } from './probe-app.js';
import { prismaOf } from '../helpers/app.js';
import { agentOf } from '../helpers/fixtures.js';
import { insertCalls, insertDoNotCallEntries, insertFailedDelivery, insertWaitingCall } from '../helpers/seed.js';

/** What every dashboard route declares (config.role). */
const DECLARED: Record<string, RouteRole> = {
  'GET /dashboard/': 'public',
  'GET /dashboard/assets/style.css': 'public',
  'GET /dashboard/assets/copy.js': 'public',
  'GET /dashboard/assets/htmx.min.js': 'public',
  'GET /dashboard/assets/live.js': 'public',
  'GET /dashboard/assets/zone-default.js': 'public',
  'GET /dashboard/assets/agent-form.js': 'public',
  'GET /dashboard/assets/favicon.svg': 'public',
  'GET /dashboard/sign-in': 'public',
  'POST /dashboard/sign-in': 'public',
  'GET /dashboard/sign-in/choose': 'public',
  'POST /dashboard/sign-in/choose': 'public',
  'POST /dashboard/sign-out': 'public',
  'GET /dashboard/set-password/:token': 'public',
  'POST /dashboard/set-password/:token': 'public',
  'GET /dashboard/forgot-password': 'public',
  'POST /dashboard/forgot-password': 'public',
  'GET /dashboard/confirm-password': 'viewer',
  'POST /dashboard/confirm-password': 'viewer',
  'GET /dashboard': 'viewer',
  'GET /dashboard/account': 'viewer',
  'POST /dashboard/account/time-zone': 'viewer',
  'POST /dashboard/account/times': 'viewer',
  'POST /dashboard/account/password': 'viewer',
  'POST /dashboard/account/sign-out-everywhere': 'viewer',
  'GET /dashboard/audit-log': 'viewer',
  'GET /dashboard/settings/api-webhooks': 'viewer',
  'GET /dashboard/settings/api-webhooks/key': 'admin',
  'POST /dashboard/settings/api-webhooks/key': 'admin',
  'POST /dashboard/settings/api-webhooks/api-access': 'admin',
  'POST /dashboard/settings/api-webhooks/default-agent': 'admin',
  'GET /dashboard/settings/api-webhooks/webhook': 'admin',
  'POST /dashboard/settings/api-webhooks/webhook': 'admin',
  'POST /dashboard/settings/api-webhooks/webhook/enable': 'admin',
  'GET /dashboard/settings/api-webhooks/deliveries': 'viewer',
  'POST /dashboard/settings/api-webhooks/deliveries/:deliveryId/resend': 'admin',
  'POST /dashboard/settings/api-webhooks/deliveries/resend-failed': 'admin',
  'GET /dashboard/agents': 'viewer',
  'GET /dashboard/agents/new': 'member',
  'POST /dashboard/agents': 'member',
  'GET /dashboard/agents/:id': 'viewer',
  'POST /dashboard/agents/:id': 'member',
  'POST /dashboard/agents/:id/default': 'admin',
  'POST /dashboard/agents/:id/archive': 'member',
  'POST /dashboard/agents/:id/restore': 'member',
  'POST /dashboard/calls/:id/cancel': 'member',
  'POST /dashboard/calls/cancel': 'member',
  'GET /dashboard/calls': 'viewer',
  'POST /dashboard/calls/column': 'viewer',
  'GET /dashboard/calls/:id': 'viewer',
  'GET /dashboard/calls/export.csv': 'viewer',
  'GET /dashboard/users': 'viewer',
  'GET /dashboard/do-not-call': 'viewer',
  'POST /dashboard/do-not-call/add': 'member',
  'POST /dashboard/do-not-call/remove': 'member',
  'POST /dashboard/do-not-call/import': 'member',
  'GET /dashboard/do-not-call/export.csv': 'viewer',
  'GET /dashboard/calling-rules': 'viewer',
  'POST /dashboard/calling-rules/settings': 'admin',
  'POST /dashboard/calling-rules/hours': 'admin',
  'POST /dashboard/calling-rules/hours/remove': 'admin',
  'GET /dashboard/settings/carrier': 'viewer',
  'POST /dashboard/settings/carrier': 'admin',
  'POST /dashboard/settings/carrier/remove': 'admin',
  'POST /dashboard/settings/carrier/clients-choose': 'admin',
  'GET /dashboard/clients': 'viewer',
  'POST /dashboard/clients': 'admin',
  'GET /dashboard/clients/:id': 'viewer',
  'GET /dashboard/clients/:id/api-webhooks': 'viewer',
  'GET /dashboard/clients/:id/api-webhooks/key': 'admin',
  'POST /dashboard/clients/:id/api-webhooks/key': 'admin',
  'POST /dashboard/clients/:id/api-webhooks/api-access': 'admin',
  'POST /dashboard/clients/:id/api-webhooks/default-agent': 'admin',
  'GET /dashboard/clients/:id/api-webhooks/webhook': 'admin',
  'POST /dashboard/clients/:id/api-webhooks/webhook': 'admin',
  'POST /dashboard/clients/:id/api-webhooks/webhook/enable': 'admin',
  'GET /dashboard/clients/:id/api-webhooks/deliveries': 'viewer',
  'POST /dashboard/clients/:id/api-webhooks/deliveries/:deliveryId/resend': 'admin',
  'POST /dashboard/clients/:id/api-webhooks/deliveries/resend-failed': 'admin',
  'POST /dashboard/users/invite': 'owner',
  'POST /dashboard/users/:id/disable': 'owner',
  'POST /dashboard/users/:id/link': 'owner',
  'POST /dashboard/users/:id/enable': 'owner',
  'POST /dashboard/users/:id/role': 'owner',
  'GET /dashboard/clients/:id/do-not-call': 'viewer',
  'POST /dashboard/clients/:id/do-not-call/add': 'member',
  'POST /dashboard/clients/:id/do-not-call/remove': 'member',
  'POST /dashboard/clients/:id/do-not-call/import': 'member',
  'GET /dashboard/clients/:id/do-not-call/export.csv': 'viewer',
  'GET /dashboard/clients/:id/calling-rules': 'viewer',
  'POST /dashboard/clients/:id/calling-rules/hours': 'admin',
  'POST /dashboard/clients/:id/calling-rules/hours/remove': 'admin',
  'GET /dashboard/clients/:id/carrier': 'viewer',
  'POST /dashboard/clients/:id/carrier': 'admin',
  'POST /dashboard/clients/:id/carrier/remove': 'admin',
};

/** Agency A (its users of each role), its client A1; agency B (a viewer, for 404s). */
interface World {
  A: string;
  A1: string;
  B: string;
}
type Place = 'own' | 'client';
interface Request {
  method: 'GET' | 'POST';
  url: string;
  form?: Record<string, string>;
  file?: { field: string; name: string; content: string };
}
/** A route above the viewer's role: a request of it on A's (own) or A1's (client) objects, and what it could change. */
interface RoleRoute {
  route: string;
  request(world: World, key: string): Request | Promise<Request>;
  snapshot?(app: App, world: World): Promise<unknown>;
}

let app: App;
let declared: Map<string, unknown>;
let routes: string[];
const world = {} as World;
const visitors = {} as Record<Role, Visitor>;
let outsider: Visitor;

const accountOf = (place: Place) => (place === 'own' ? world.A : world.A1);
const settings = (place: Place) =>
  place === 'own' ? '/dashboard/settings/api-webhooks' : `/dashboard/clients/${world.A1}/api-webhooks`;
const dncBase = (place: Place) =>
  place === 'own' ? '/dashboard/do-not-call' : `/dashboard/clients/${world.A1}/do-not-call`;
const rulesBase = (place: Place) =>
  place === 'own' ? '/dashboard/calling-rules' : `/dashboard/clients/${world.A1}/calling-rules`;

const carrierBase = (place: Place) =>
  place === 'own' ? '/dashboard/settings/carrier' : `/dashboard/clients/${world.A1}/carrier`;
const carrierRow = (place: Place) => () =>
  prismaOf(app).accountCarrier.findUnique({ where: { accountId: accountOf(place) } });

const accountRow = (place: Place) => () =>
  prismaOf(app).account.findUniqueOrThrow({
    where: { id: accountOf(place) },
    select: { apiAccessEnabled: true, defaultAgentId: true, callingRules: true, updatedAt: true },
  });
const keys = (place: Place) => () =>
  prismaOf(app).apiKey.findMany({ where: { accountId: accountOf(place) }, select: { id: true, revokedAt: true } });
const endpoint = (place: Place) => () =>
  prismaOf(app).webhookEndpoint.findUnique({
    where: { accountId: accountOf(place) },
    select: { url: true, secret: true, enabled: true, updatedAt: true },
  });
const deliveries = (place: Place) => () =>
  prismaOf(app).webhookDelivery.findMany({
    where: { endpoint: { accountId: accountOf(place) } },
    orderBy: { id: 'asc' },
    select: { id: true, status: true, attemptCount: true, nextAttemptAt: true },
  });
const dnc = (place: Place) => () =>
  prismaOf(app).doNotCallEntry.findMany({
    where: { accountId: accountOf(place) },
    orderBy: { phoneNumber: 'asc' },
    select: { phoneNumber: true, reason: true },
  });
const people = () =>
  prismaOf(app).user.findMany({
    where: { accountId: world.A },
    orderBy: { email: 'asc' },
    select: { id: true, email: true, role: true, disabledAt: true, tokens: { select: { id: true, usedAt: true } } },
  });

/** One object per route and key (a refused role's request, or the allowed one's), made on first use. */
const made = new Map<string, Promise<string>>();
const once = (key: string, make: () => Promise<string>) => {
  if (!made.has(key)) made.set(key, make());
  return made.get(key)!;
};
const agentFor = (key: string) =>
  once(
    `agent ${key}`,
    async () => (await createAgent(app.storage, { accountId: world.A, name: key, now: app.now() })).id,
  );
const waitingCall = (key: string) =>
  once(`call ${key}`, async () => insertWaitingCall(prismaOf(app), world.A, await agentOf(prismaOf(app), world.A)));
const failedDelivery = (place: Place, key: string) =>
  once(`delivery ${place} ${key}`, async () => {
    const accountId = accountOf(place);
    const agentId = await agentOf(prismaOf(app), accountId);
    const [callId] = await insertCalls(prismaOf(app), { accountId, agentId, count: 1, createdAt: new Date() });
    return insertFailedDelivery(prismaOf(app), accountId, callId!);
  });
const userFor = (key: string) =>
  once(`user ${key}`, async () => {
    const email = `target-${key.replace(/[^a-z0-9]+/gi, '-')}@roles.example`.toLowerCase();
    return (
      await createUser(app.storage, {
        accountId: world.A,
        email,
        role: 'member',
        actor: { kind: 'operator' },
        now: app.now(),
      })
    ).id;
  });

const NO_FIELDS: Record<string, string> = {};
const AGENT_FORM = { phone: '+14155550123', timezone: 'Europe/Paris', policy: 'reject' };

function apiWebhooksRoutes(place: Place): RoleRoute[] {
  const prefix = place === 'own' ? '/dashboard/settings/api-webhooks' : '/dashboard/clients/:id/api-webhooks';
  return [
    { route: `GET ${prefix}/key`, request: () => ({ method: 'GET', url: `${settings(place)}/key` }) },
    {
      route: `POST ${prefix}/key`,
      request: () => ({ method: 'POST', url: `${settings(place)}/key`, form: { replaces: 'none', confirm: 'on' } }),
      snapshot: keys(place),
    },
    {
      route: `POST ${prefix}/api-access`,
      request: () => ({ method: 'POST', url: `${settings(place)}/api-access`, form: {} }),
      snapshot: accountRow(place),
    },
    {
      route: `POST ${prefix}/default-agent`,
      request: async () => ({
        method: 'POST',
        url: `${settings(place)}/default-agent`,
        form: { agent_id: await agentOf(prismaOf(app), accountOf(place)) },
      }),
      snapshot: accountRow(place),
    },
    { route: `GET ${prefix}/webhook`, request: () => ({ method: 'GET', url: `${settings(place)}/webhook` }) },
    {
      route: `POST ${prefix}/webhook`,
      request: () => ({
        method: 'POST',
        url: `${settings(place)}/webhook`,
        form: { url: 'https://hooks.example.com/roles', replaces: 'none' },
      }),
      snapshot: endpoint(place),
    },
    {
      route: `POST ${prefix}/webhook/enable`,
      request: () => ({ method: 'POST', url: `${settings(place)}/webhook/enable`, form: {} }),
      snapshot: endpoint(place),
    },
    {
      route: `POST ${prefix}/deliveries/:deliveryId/resend`,
      request: async (_world, key) => ({
        method: 'POST',
        url: `${settings(place)}/deliveries/${await failedDelivery(place, key)}/resend`,
        form: {},
      }),
      snapshot: deliveries(place),
    },
    {
      route: `POST ${prefix}/deliveries/resend-failed`,
      request: async (_world, key) => {
        await failedDelivery(place, `since ${key}`);
        return {
          method: 'POST',
          url: `${settings(place)}/deliveries/resend-failed`,
          form: { since: '2000-01-01T00:00' },
        };
      },
      snapshot: deliveries(place),
    },
  ];
}

function doNotCallRoutes(place: Place): RoleRoute[] {
  const prefix = place === 'own' ? '/dashboard/do-not-call' : '/dashboard/clients/:id/do-not-call';
  return [
    {
      route: `POST ${prefix}/add`,
      request: () => ({ method: 'POST', url: `${dncBase(place)}/add`, form: { phone_number: '+14155550901' } }),
      snapshot: dnc(place),
    },
    {
      route: `POST ${prefix}/remove`,
      request: async () => {
        await insertDoNotCallEntries(prismaOf(app), {
          data: [{ accountId: accountOf(place), phoneNumber: '+14155550999', addedBy: 'operator' }],
          skipDuplicates: true,
        });
        return { method: 'POST', url: `${dncBase(place)}/remove`, form: { phone_number: '+14155550999' } };
      },
      snapshot: dnc(place),
    },
    {
      route: `POST ${prefix}/import`,
      request: () => ({
        method: 'POST',
        url: `${dncBase(place)}/import`,
        form: {},
        file: { field: 'file', name: 'list.csv', content: 'phone_number,reason\n+14155550911,x\n' },
      }),
      snapshot: dnc(place),
    },
  ];
}

function callingHoursRoutes(place: Place): RoleRoute[] {
  const prefix = place === 'own' ? '/dashboard/calling-rules' : '/dashboard/clients/:id/calling-rules';
  return [
    {
      route: `POST ${prefix}/hours`,
      request: () => ({
        method: 'POST',
        url: `${rulesBase(place)}/hours`,
        form: { name: 'By a role', days: 'mon', from: '10:00', to: '18:00' },
      }),
      snapshot: accountRow(place),
    },
    {
      route: `POST ${prefix}/hours/remove`,
      request: async () => {
        const rules = (await accountRow(place)()).callingRules as { own_rules?: { name: string }[] } | null;
        if (!rules?.own_rules?.some((rule) => rule.name === 'Kept'))
          await putCallingHours(app.storage, {
            accountId: accountOf(place),
            hours: { name: 'Kept', days: 'daily', from: '09:00', to: '17:00' },
            now: app.now(),
            actor: { kind: 'operator' },
          });
        return { method: 'POST', url: `${rulesBase(place)}/hours/remove`, form: { name: 'Kept' } };
      },
      snapshot: accountRow(place),
    },
  ];
}

function carrierRoutes(place: Place): RoleRoute[] {
  const prefix = place === 'own' ? '/dashboard/settings/carrier' : '/dashboard/clients/:id/carrier';
  return [
    {
      // Refused by its own checks once the role lets it through (no PUBLIC_BASE_URL here, the SID is malformed).
      route: `POST ${prefix}`,
      request: () => ({
        method: 'POST',
        url: carrierBase(place),
        form: { provider: 'twilio', account_sid: 'AC12', auth_token: 'f00d'.repeat(8) },
      }),
      snapshot: carrierRow(place),
    },
    {
      route: `POST ${prefix}/remove`,
      request: () => ({ method: 'POST', url: `${carrierBase(place)}/remove`, form: {} }),
      snapshot: carrierRow(place),
    },
  ];
}

const callState = (key: string) => async () =>
  prismaOf(app).call.findUniqueOrThrow({ where: { id: await waitingCall(key) }, select: { status: true } });

/** Every route above the viewer's role (the first tests check this list against DECLARED). */
const ROLE_ROUTES: RoleRoute[] = [
  ...apiWebhooksRoutes('own'),
  ...apiWebhooksRoutes('client'),
  ...doNotCallRoutes('own'),
  ...doNotCallRoutes('client'),
  ...callingHoursRoutes('own'),
  ...callingHoursRoutes('client'),
  ...carrierRoutes('own'),
  ...carrierRoutes('client'),
  {
    route: 'POST /dashboard/settings/carrier/clients-choose',
    request: () => ({ method: 'POST', url: '/dashboard/settings/carrier/clients-choose', form: { allowed: 'on' } }),
    snapshot: () =>
      prismaOf(app).account.findUniqueOrThrow({ where: { id: world.A }, select: { clientsChooseCarrier: true } }),
  },
  {
    route: 'POST /dashboard/calling-rules/settings',
    request: () => ({ method: 'POST', url: '/dashboard/calling-rules/settings', form: { enabled: 'on' } }),
    snapshot: accountRow('own'),
  },
  { route: 'GET /dashboard/agents/new', request: () => ({ method: 'GET', url: '/dashboard/agents/new' }) },
  {
    route: 'POST /dashboard/agents',
    request: (world, key) => ({
      method: 'POST',
      url: '/dashboard/agents',
      form: { ...AGENT_FORM, name: `Made ${key}`, account: world.A },
    }),
    snapshot: () => prismaOf(app).agent.count({ where: { accountId: world.A } }),
  },
  {
    route: 'POST /dashboard/agents/:id',
    request: async (_world, key) => ({
      method: 'POST',
      url: `/dashboard/agents/${await agentFor(key)}`,
      form: { ...AGENT_FORM, name: `Renamed ${key}` },
    }),
    snapshot: async () => prismaOf(app).agent.findMany({ where: { accountId: world.A }, orderBy: { id: 'asc' } }),
  },
  {
    route: 'POST /dashboard/agents/:id/default',
    request: async (_world, key) => ({
      method: 'POST',
      url: `/dashboard/agents/${await agentFor(key)}/default`,
      form: {},
    }),
    snapshot: accountRow('own'),
  },
  ...(['archive', 'restore'] as const).map((verb): RoleRoute => ({
    route: `POST /dashboard/agents/:id/${verb}`,
    request: async (_world, key) => ({
      method: 'POST',
      url: `/dashboard/agents/${await agentFor(`${verb} ${key}`)}/${verb}`,
      form: {},
    }),
    snapshot: () =>
      prismaOf(app).agent.findMany({
        where: { accountId: world.A },
        orderBy: { id: 'asc' },
        select: { archivedAt: true },
      }),
  })),
  {
    route: 'POST /dashboard/calls/:id/cancel',
    request: async (_world, key) => ({
      method: 'POST',
      url: `/dashboard/calls/${await waitingCall(key)}/cancel`,
      form: {},
    }),
    snapshot: callState('one'),
  },
  {
    route: 'POST /dashboard/calls/cancel',
    request: async (_world, key) => ({
      method: 'POST',
      url: '/dashboard/calls/cancel',
      form: { call: await waitingCall(`many ${key}`) },
    }),
    snapshot: () =>
      prismaOf(app).call.findMany({ where: { accountId: world.A }, orderBy: { id: 'asc' }, select: { status: true } }),
  },
  {
    route: 'POST /dashboard/clients',
    request: (_world, key) => ({ method: 'POST', url: '/dashboard/clients', form: { name: `Client ${key}` } }),
    snapshot: () => prismaOf(app).account.count(),
  },
  {
    route: 'POST /dashboard/users/invite',
    request: (world, key) => ({
      method: 'POST',
      url: '/dashboard/users/invite',
      form: {
        email: `invited-${key.replace(/[^a-z0-9]+/gi, '-')}@roles.example`.toLowerCase(),
        account: world.A,
        role: 'viewer',
      },
    }),
    snapshot: people,
  },
  ...(['disable', 'link', 'role'] as const).map((verb): RoleRoute => ({
    route: `POST /dashboard/users/:id/${verb}`,
    request: async (_world, key) => ({
      method: 'POST',
      url: `/dashboard/users/${await userFor(`${verb} ${key}`)}/${verb}`,
      form: verb === 'role' ? { role: 'owner' } : NO_FIELDS,
    }),
    snapshot: people,
  })),
  {
    route: 'POST /dashboard/users/:id/enable',
    request: async (_world, key) => {
      const id = await userFor(`enable ${key}`);
      await prismaOf(app).user.update({ where: { id }, data: { disabledAt: new Date() } });
      return { method: 'POST', url: `/dashboard/users/${id}/enable`, form: {} };
    },
    snapshot: people,
  },
];

/** The roles below `least`: each must be refused. */
const below = (least: Role) => ROLES.slice(0, ROLES.indexOf(least));

async function send(visitor: Visitor, { method, url, form, file }: Request) {
  if (method === 'GET') return visitor.get(url);
  await visitor.get('/dashboard/account');
  if (file) return visitor.upload(url, file, form);
  return visitor.request('POST', url, { _csrf: visitor.lastCsrf ?? '', ...form });
}

beforeAll(async () => {
  const built = await buildProbeApp(
    (scope) => scope.dashboardGuards.requireUser,
    DASHBOARD_ENV,
    () => new Date(),
    (scope) => {
      // Routes declared below the actions they run: request.admin.run checks the action's own role.
      void scope.register(async (family) => {
        family.addHook('preHandler', family.dashboardGuards.requireUser);
        const options = { schema: { hide: true }, config: { role: 'viewer' as const } };
        family.post('/under-declared', options, async (request) => {
          await request.admin.run(setApiAccess, request.user.accountId, false, request.admin.actor, app.now());
          return 'switched';
        });
        family.post('/operator-only', options, async (request) => {
          await request.admin.run(createAgency, { name: 'Made from the dashboard' });
          return 'made';
        });
      });
    },
  );
  app = built.probe;
  declared = built.roles;
  routes = built.routes.filter((r) => / \/dashboard/.test(r));
  world.A = (await createAgency(app.storage, { name: 'Agency A' })).id;
  world.B = (await createAgency(app.storage, { name: 'Agency B' })).id;
  world.A1 = (await createClient(app.storage, { agencyId: world.A, name: 'Client A1', now: app.now() })).id;
  for (const [i, role] of ROLES.entries()) {
    const email = `${role}@roles.example`;
    const id = await createUserWithPassword(app.storage, world.A, email);
    await prismaOf(app).user.update({ where: { id }, data: { role } });
    visitors[role] = new Visitor(app);
    visitors[role].ip = `10.9.0.${i + 1}`;
    expect((await visitors[role].signIn(email)).status).toBe(303);
  }
  const outsiderId = await createUserWithPassword(app.storage, world.B, 'outsider@roles.example');
  await prismaOf(app).user.update({ where: { id: outsiderId }, data: { role: 'owner' } });
  outsider = new Visitor(app);
  outsider.ip = '10.9.1.1';
  expect((await outsider.signIn('outsider@roles.example')).status).toBe(303);
});

describe('roles of the dashboard', () => {
  it('has every dashboard route declare its role, as DECLARED says', () => {
    expect(routes.length).toBeGreaterThan(40);
    expect(Object.fromEntries(routes.map((r) => [r, declared.get(r)]))).toEqual(DECLARED);
  });

  it('lists in ROLE_ROUTES every route that needs more than the viewer role', () => {
    const needing = Object.entries(DECLARED)
      .filter(([, role]) => role !== 'public' && role !== 'viewer')
      .map(([route]) => route);
    expect(ROLE_ROUTES.map((r) => r.route).sort()).toEqual(needing.sort());
  });

  for (const entry of ROLE_ROUTES) {
    const least = DECLARED[entry.route] as Role;
    for (const role of below(least)) {
      it(`${entry.route}: a ${role} of the account gets the 403 page naming ${least}, and changes nothing`, async () => {
        const request = await entry.request(world, role);
        const before = await entry.snapshot?.(app, world);
        const res = await send(visitors[role], request);
        expect(res.status).toBe(403);
        expect(res.body).toContain(html(roleNeeded(least)));
        expect(await entry.snapshot?.(app, world)).toEqual(before);
      });
    }
  }

  for (const entry of ROLE_ROUTES) {
    const least = DECLARED[entry.route] as Role;
    it(`${entry.route}: a ${least} of the account is let through`, async () => {
      const res = await send(visitors[least], await entry.request(world, least));
      // Done, or the form shown again with its problem (the role let it reach the form's own checks).
      expect([200, 303, 400], res.body.slice(0, 2000)).toContain(res.status);
    });
  }

  it("refuses an action above the viewer's role even from a route declared lower (the action's own role)", async () => {
    const before = await accountRow('own')();
    const member = await send(visitors.member, { method: 'POST', url: '/probe/under-declared', form: {} });
    expect(member.status).toBe(403);
    expect(member.body).toContain(html(roleNeeded('admin')));
    expect(await accountRow('own')()).toEqual(before);
    const accounts = await prismaOf(app).account.count();
    expect((await send(visitors.owner, { method: 'POST', url: '/probe/operator-only', form: {} })).status).toBe(500);
    expect(await prismaOf(app).account.count()).toBe(accounts);
    expect((await send(visitors.admin, { method: 'POST', url: '/probe/under-declared', form: {} })).status).toBe(200);
  });

  for (const entry of ROLE_ROUTES.filter((r) => r.route.includes('/:id') && !r.route.includes('/clients/:id')))
    it(`${entry.route}: a user of another agency gets 404, whatever their role`, async () => {
      const request = await entry.request(world, 'outsider');
      const before = await entry.snapshot?.(app, world);
      const res = await send(outsider, request);
      expect(res.status).toBe(404);
      expect(await entry.snapshot?.(app, world)).toEqual(before);
    });
});
