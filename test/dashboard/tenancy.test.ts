// Tenancy, proven: every dashboard route is classified below, and each route that names another account's object
// answers 404 (never 403) and changes nothing for a user of another agency and for a user of a sibling client;
// agency-only pages are 404 for client users. EXTEND THE TABLES with every route you add (the first test fails
// until a new route is classified).
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import { audit } from '../../src/admin/audit.js';
import { putCallingHours } from '../../src/admin/calling-rules.js';
import { createUser } from '../../src/admin/users.js';
import type { App } from '../../src/app.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';
import { buildProbeApp } from './probe-app.js';
import { prismaOf } from '../helpers/app.js';
import { CARRIER_SID, CARRIER_TOKEN, CarrierAccountsStandIn } from '../helpers/carrier-accounts-stand-in.js';
import { agentOf } from '../helpers/fixtures.js';
import {
  insertCalls,
  insertWaitingCall,
  insertFailedDelivery,
  forceUsers,
  insertDoNotCallEntries,
  insertDoNotCallEntry,
} from '../helpers/seed.js';

type Tenant = 'A' | 'A1' | 'A2' | 'B';
/**
 * Agency A with clients A1 and A2, agency B; one signed-in user in each. `users[target][viewer]`: a user of `target`
 * that only `viewer`'s requests act on (so an allowed action by one viewer cannot hide another's forbidden one).
 */
type World = Record<Tenant, string> & { users: Record<Tenant, Record<Tenant, string>> };

/** A file a route's form uploads (multipart), with the form's other fields. */
interface Upload {
  field: string;
  name: string;
  content: string;
}

/** A route that names an object of `target` (URL or form), and how to see that it did not change it. */
interface ObjectRoute {
  route: string;
  request(
    world: World,
    target: Tenant,
    viewer: Tenant,
  ): { method: 'GET' | 'POST'; url: string; form?: Record<string, string>; file?: Upload };
  /** A snapshot of what the request could change; compared before and after. */
  snapshot?(app: App, world: World, target: Tenant): Promise<unknown>;
  /** Whose objects each viewer reaches through this route, when fewer than MAY_MANAGE (agency-only, clients-only). */
  reach?: Record<Tenant, Tenant[]>;
}

/** The users of `target`'s account and whether each is disabled (what inviting or disabling would change). */
const usersOf = (app: App, world: World, target: Tenant) =>
  prismaOf(app).user.findMany({
    where: { accountId: world[target] },
    orderBy: { email: 'asc' },
    select: { id: true, email: true, disabledAt: true },
  });

/** The one-time links of `target`'s users (what a new sign-in link would add and void). */
const linksOf = (app: App, world: World, target: Tenant) =>
  prismaOf(app).oneTimeToken.findMany({
    where: { user: { accountId: world[target] } },
    orderBy: { id: 'asc' },
    select: { id: true, expiresAt: true, usedAt: true },
  });

/** `target`'s made-up users, disabled first (so that enabling one would show), and their state. */
async function disabledUsersOf(app: App, world: World, target: Tenant) {
  await forceUsers(prismaOf(app), {
    where: { accountId: world[target], email: { startsWith: 'user-of-' }, disabledAt: null },
    data: { disabledAt: new Date() },
  });
  return usersOf(app, world, target);
}

/** Agency users act on users of the agency and its clients; client users invite and disable nobody. */
const AGENCY_USERS_REACH: Record<Tenant, Tenant[]> = { A: ['A', 'A1', 'A2'], A1: [], A2: [], B: ['B'] };

/** A finished call of each tenant, made on first use, for the call detail route. */
const callsOf: Partial<Record<Tenant, string>> = {};
async function callOfTenant(app: App, world: World, target: Tenant): Promise<string> {
  callsOf[target] ??= (
    await insertCalls(prismaOf(app), {
      accountId: world[target],
      agentId: await agentOf(prismaOf(app), world[target]),
      count: 1,
      createdAt: new Date(),
    })
  )[0]!;
  return callsOf[target];
}

/** A waiting call of each tenant per route: the last one while it still waits, else a new one (a cancel uses it up). */
const waitingOf: Record<string, string> = {};
async function waitingCallState(app: App, world: World, target: Tenant, route: string) {
  const key = `${route} ${target}`;
  const state = (id: string) =>
    prismaOf(app).call.findUniqueOrThrow({
      where: { id },
      select: { status: true, failureReason: true, updatedAt: true },
    });
  const last = waitingOf[key];
  if (last && (await state(last)).status === 'initiated') return state(last);
  waitingOf[key] = await insertWaitingCall(prismaOf(app), world[target], await agentOf(prismaOf(app), world[target]));
  return state(waitingOf[key]);
}

/** An agent of each tenant, made on first use, for the agent routes; and a valid agent form. */
const agentsOf: Partial<Record<Tenant, string>> = {};
async function agentOfTenant(app: App, world: World, target: Tenant): Promise<string> {
  agentsOf[target] ??= (
    await createAgent(app.storage, {
      accountId: world[target],
      name: `Agent of ${target}`,
      phone: '+14155550100',
      now: app.now(),
    })
  ).id;
  return agentsOf[target];
}
const AGENT_FORM = {
  phone: '+14155550123',
  timezone: 'Europe/Paris',
  policy: 'reject',
  window_day: '0:sat',
  window_from: '08:00',
  window_to: '20:00',
  // The settings too: a refused viewer's request changes none of them (the snapshot is the whole agent row).
  window_timezone: 'recipient',
  max_attempts: '3',
  retry_on: 'busy',
  retry_waits_minutes: '15, 60',
  voicemail: 'leave_message',
  voicemail_message: 'Hello {{name}}',
  handoff: 'sip',
  stream_url: 'wss://bots.tenancy.example/stream',
  stream_parameters: 'bot=sales',
  sip_uri: 'sip:bot@sip.tenancy.example',
  sip_headers: 'X-Bot=sales',
};

/** API & Webhooks of a client: the agency's pages (its own id is no client; client users have no Clients pages). */
const CLIENT_PAGES_REACH: Record<Tenant, Tenant[]> = { A: ['A1', 'A2'], A1: [], A2: [], B: [] };
const settingsOf = (world: World, target: Tenant) => `/dashboard/clients/${world[target]}/api-webhooks`;
/** A failed delivery per route and tenant (a resend makes it pending, so no two routes share one), made on first use. */
const resendable: Record<string, string> = {};
async function resendableDelivery(app: App, world: World, target: Tenant, route: string): Promise<string> {
  const key = `${route} ${target}`;
  if (!resendable[key]) {
    const [callId] = await insertCalls(prismaOf(app), {
      accountId: world[target],
      agentId: await agentOf(prismaOf(app), world[target]),
      count: 1,
      createdAt: new Date(),
    });
    resendable[key] = await insertFailedDelivery(prismaOf(app), world[target], callId!);
  }
  return resendable[key];
}
/** An agent of each tenant (the one its calls use), for the default-agent route. */
const usableAgent: Partial<Record<Tenant, string>> = {};
const deliveryState = async (app: App, id: string) =>
  prismaOf(app).webhookDelivery.findUnique({
    where: { id },
    select: { status: true, attemptCount: true, nextAttemptAt: true, completedAt: true },
  });
const endpointState = (app: App, world: World, target: Tenant) =>
  prismaOf(app).webhookEndpoint.findUnique({
    where: { accountId: world[target] },
    select: { url: true, secret: true, enabled: true, updatedAt: true },
  });
const API_WEBHOOKS_ROUTES: ObjectRoute[] = [
  {
    route: 'GET /dashboard/clients/:id/api-webhooks',
    request: (world, target) => ({ method: 'GET', url: settingsOf(world, target) }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'GET /dashboard/clients/:id/api-webhooks/key',
    request: (world, target) => ({ method: 'GET', url: `${settingsOf(world, target)}/key` }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/api-webhooks/key',
    request: (world, target) => ({
      method: 'POST',
      url: `${settingsOf(world, target)}/key`,
      form: { replaces: 'none', confirm: 'on' },
    }),
    snapshot: (app, world, target) =>
      prismaOf(app).apiKey.findMany({
        where: { accountId: world[target] },
        orderBy: { id: 'asc' },
        select: { id: true, revokedAt: true },
      }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/api-webhooks/api-access',
    request: (world, target) => ({
      method: 'POST',
      url: `${settingsOf(world, target)}/api-access`,
      form: { api_access: 'on' },
    }),
    snapshot: (app, world, target) =>
      prismaOf(app).account.findUnique({
        where: { id: world[target] },
        select: { apiAccessEnabled: true, updatedAt: true },
      }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/api-webhooks/default-agent',
    request: (world, target) => ({
      method: 'POST',
      url: `${settingsOf(world, target)}/default-agent`,
      form: { agent_id: usableAgent[target]! },
    }),
    snapshot: async (app, world, target) => {
      usableAgent[target] = await agentOf(prismaOf(app), world[target]);
      return prismaOf(app).account.findUnique({
        where: { id: world[target] },
        select: { defaultAgentId: true, updatedAt: true },
      });
    },
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'GET /dashboard/clients/:id/api-webhooks/webhook',
    request: (world, target) => ({ method: 'GET', url: `${settingsOf(world, target)}/webhook` }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/api-webhooks/webhook',
    request: (world, target) => ({
      method: 'POST',
      url: `${settingsOf(world, target)}/webhook`,
      form: { url: 'https://hooks.example.com/tenancy', replaces: 'none' },
    }),
    snapshot: endpointState,
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/api-webhooks/webhook/enable',
    request: (world, target) => ({ method: 'POST', url: `${settingsOf(world, target)}/webhook/enable`, form: {} }),
    snapshot: async (app, world, target) => {
      await resendableDelivery(app, world, target, 'enable');
      return endpointState(app, world, target);
    },
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'GET /dashboard/clients/:id/api-webhooks/deliveries',
    request: (world, target) => ({ method: 'GET', url: `${settingsOf(world, target)}/deliveries` }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/api-webhooks/deliveries/:deliveryId/resend',
    request: (world, target) => ({
      method: 'POST',
      url: `${settingsOf(world, target)}/deliveries/${resendable[`client ${target}`]}/resend`,
      form: {},
    }),
    snapshot: async (app, world, target) => deliveryState(app, await resendableDelivery(app, world, target, 'client')),
    reach: CLIENT_PAGES_REACH,
  },
  {
    // Through the viewer's own settings: only the viewer's own account's deliveries (an agency resends a client's on the client's page).
    route: 'POST /dashboard/settings/api-webhooks/deliveries/:deliveryId/resend',
    request: (_world, target) => ({
      method: 'POST',
      url: `/dashboard/settings/api-webhooks/deliveries/${resendable[`own ${target}`]}/resend`,
      form: {},
    }),
    snapshot: async (app, world, target) => deliveryState(app, await resendableDelivery(app, world, target, 'own')),
    reach: { A: ['A'], A1: ['A1'], A2: ['A2'], B: ['B'] },
  },
  {
    route: 'POST /dashboard/clients/:id/api-webhooks/deliveries/resend-failed',
    request: (world, target) => ({
      method: 'POST',
      url: `${settingsOf(world, target)}/deliveries/resend-failed`,
      form: { since: '2000-01-01T00:00' },
    }),
    snapshot: async (app, world, target) => {
      await resendableDelivery(app, world, target, 'since');
      return prismaOf(app).webhookDelivery.findMany({
        where: { endpoint: { accountId: world[target] } },
        orderBy: { id: 'asc' },
        select: { id: true, status: true, nextAttemptAt: true },
      });
    },
    reach: CLIENT_PAGES_REACH,
  },
];

/** A client's do-not-call list: the agency's pages (its own list is /dashboard/do-not-call, a self route). */
const dncOf = (world: World, target: Tenant) => `/dashboard/clients/${world[target]}/do-not-call`;
const dncEntries = (app: App, world: World, target: Tenant) =>
  prismaOf(app).doNotCallEntry.findMany({
    where: { accountId: world[target] },
    orderBy: { phoneNumber: 'asc' },
    select: { phoneNumber: true, reason: true },
  });
/** A number per viewer, so that one viewer's allowed add cannot hide another's forbidden one. */
const dncNumber = (viewer: Tenant) => `+1415555090${TENANTS.indexOf(viewer)}`;
const DNC_ROUTES: ObjectRoute[] = [
  {
    route: 'GET /dashboard/clients/:id/do-not-call',
    request: (world, target) => ({ method: 'GET', url: dncOf(world, target) }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/do-not-call/add',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: `${dncOf(world, target)}/add`,
      form: { phone_number: dncNumber(viewer), reason: `by ${viewer}` },
    }),
    snapshot: dncEntries,
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/do-not-call/remove',
    request: (world, target) => ({
      method: 'POST',
      url: `${dncOf(world, target)}/remove`,
      form: { phone_number: '+14155550999' },
    }),
    snapshot: async (app, world, target) => {
      await insertDoNotCallEntries(prismaOf(app), {
        data: [{ accountId: world[target], phoneNumber: '+14155550999', addedBy: 'operator' }],
        skipDuplicates: true,
      });
      return dncEntries(app, world, target);
    },
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/do-not-call/import',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: `${dncOf(world, target)}/import`,
      form: {},
      file: {
        field: 'file',
        name: 'list.csv',
        content: `phone_number,reason\n${dncNumber(viewer).replace('090', '091')},x\n`,
      },
    }),
    snapshot: dncEntries,
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'GET /dashboard/clients/:id/do-not-call/export.csv',
    request: (world, target) => ({ method: 'GET', url: `${dncOf(world, target)}/export.csv` }),
    reach: CLIENT_PAGES_REACH,
  },
];

/** A client's calling rules: the agency's pages (its own are /dashboard/calling-rules, a self route). */
const rulesOf = (world: World, target: Tenant) => `/dashboard/clients/${world[target]}/calling-rules`;
const storedRules = async (app: App, world: World, target: Tenant) =>
  (await prismaOf(app).account.findUniqueOrThrow({ where: { id: world[target] } })).callingRules;
const CALLING_RULES_ROUTES: ObjectRoute[] = [
  {
    route: 'GET /dashboard/clients/:id/calling-rules',
    request: (world, target) => ({ method: 'GET', url: rulesOf(world, target) }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/calling-rules/hours',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: `${rulesOf(world, target)}/hours`,
      form: { name: `by ${viewer}`, days: 'mon', from: '10:00', to: '18:00' },
    }),
    snapshot: storedRules,
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/calling-rules/hours/remove',
    request: (world, target) => ({
      method: 'POST',
      url: `${rulesOf(world, target)}/hours/remove`,
      form: { name: 'Kept' },
    }),
    snapshot: async (app, world, target) => {
      const stored = (await storedRules(app, world, target)) as { own_rules?: { name: string }[] } | null;
      if (!stored?.own_rules?.some((rule) => rule.name === 'Kept'))
        await putCallingHours(app.storage, {
          accountId: world[target],
          hours: { name: 'Kept', days: 'daily', from: '09:00', to: '17:00' },
          now: app.now(),
          actor: { kind: 'operator' },
        });
      return storedRules(app, world, target);
    },
    reach: CLIENT_PAGES_REACH,
  },
];

/** A client's carrier: the agency's pages (its own are /dashboard/settings/carrier, a self route). */
const carrierOf = (world: World, target: Tenant) => `/dashboard/clients/${world[target]}/carrier`;
/** The carriers' stand-in the credentials set below are checked at (the app is built with its environment). */
const carriers = new CarrierAccountsStandIn();
const storedCarrier = (app: App, world: World, target: Tenant) =>
  prismaOf(app).accountCarrier.findUnique({
    where: { accountId: world[target] },
    select: { provider: true, shown: true, updatedAt: true },
  });
const CARRIER_ROUTES: ObjectRoute[] = [
  {
    route: 'GET /dashboard/clients/:id/carrier',
    request: (world, target) => ({ method: 'GET', url: carrierOf(world, target) }),
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/carrier',
    request: (world, target) => ({
      method: 'POST',
      url: carrierOf(world, target),
      form: { provider: 'twilio', account_sid: CARRIER_SID, auth_token: CARRIER_TOKEN },
    }),
    snapshot: storedCarrier,
    reach: CLIENT_PAGES_REACH,
  },
  {
    route: 'POST /dashboard/clients/:id/carrier/remove',
    request: (world, target) => ({ method: 'POST', url: `${carrierOf(world, target)}/remove`, form: {} }),
    snapshot: storedCarrier,
    reach: CLIENT_PAGES_REACH,
  },
];

/** Routes that name another account's object. (The probe stands in until the clients and settings pages exist.) */
const OBJECT_ROUTES: ObjectRoute[] = [
  {
    route: 'GET /probe/accounts/:id',
    request: (world, target) => ({ method: 'GET', url: `/probe/accounts/${world[target]}` }),
  },
  {
    route: 'GET /probe/early/:id',
    request: (world, target) => ({ method: 'GET', url: `/probe/early/${world[target]}` }),
  },
  {
    route: 'GET /probe/early/:id/name',
    request: (world, target) => ({ method: 'GET', url: `/probe/early/${world[target]}/name` }),
  },
  ...API_WEBHOOKS_ROUTES,
  ...DNC_ROUTES,
  ...CALLING_RULES_ROUTES,
  ...CARRIER_ROUTES,
  {
    route: 'GET /dashboard/clients/:id',
    request: (world, target) => ({ method: 'GET', url: `/dashboard/clients/${world[target]}` }),
    // Client pages are the agency's: its own account is no client (404), and a client user has no Clients pages.
    reach: { A: ['A1', 'A2'], A1: [], A2: [], B: [] },
  },
  {
    route: 'POST /dashboard/users/invite',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: '/dashboard/users/invite',
      form: { email: `invitee-of-${target}-by-${viewer}@tenancy.example`, account: world[target] },
    }),
    snapshot: usersOf,
    reach: AGENCY_USERS_REACH,
  },
  {
    // Before disable (a disabled user gets no link): the link the allowed viewer makes is for a user only it acts on.
    route: 'POST /dashboard/users/:id/link',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: `/dashboard/users/${world.users[target][viewer]}/link`,
      form: {},
    }),
    snapshot: linksOf,
    reach: AGENCY_USERS_REACH,
  },
  {
    route: 'POST /dashboard/users/:id/disable',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: `/dashboard/users/${world.users[target][viewer]}/disable`,
      form: {},
    }),
    snapshot: usersOf,
    reach: AGENCY_USERS_REACH,
  },
  {
    route: 'POST /dashboard/users/:id/role',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: `/dashboard/users/${world.users[target][viewer]}/role`,
      form: { role: 'viewer' },
    }),
    snapshot: (app, world, target) =>
      prismaOf(app).user.findMany({
        where: { accountId: world[target] },
        orderBy: { email: 'asc' },
        select: { id: true, role: true },
      }),
    reach: AGENCY_USERS_REACH,
  },
  {
    route: 'POST /dashboard/users/:id/enable',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: `/dashboard/users/${world.users[target][viewer]}/enable`,
      form: {},
    }),
    snapshot: disabledUsersOf,
    reach: AGENCY_USERS_REACH,
  },
  {
    route: 'GET /dashboard/calls/:id',
    request: (_world, target) => ({ method: 'GET', url: `/dashboard/calls/${callsOf[target]!}` }),
    // A GET changes nothing; the snapshot is where the target's call is made.
    snapshot: (app, world, target) => callOfTenant(app, world, target),
  },
  {
    route: 'POST /dashboard/calls/:id/cancel',
    request: (_world, target) => ({
      method: 'POST',
      url: `/dashboard/calls/${waitingOf[`one ${target}`]}/cancel`,
      form: {},
    }),
    snapshot: (app, world, target) => waitingCallState(app, world, target, 'one'),
  },
  {
    // The Calls list's form: one call outside the viewer's accounts refuses the whole form (test/dashboard/call-cancel.test.ts).
    route: 'POST /dashboard/calls/cancel',
    request: (_world, target) => ({
      method: 'POST',
      url: '/dashboard/calls/cancel',
      form: { call: waitingOf[`many ${target}`]! },
    }),
    snapshot: (app, world, target) => waitingCallState(app, world, target, 'many'),
  },
  {
    route: 'GET /dashboard/agents/:id',
    request: (_world, target) => ({ method: 'GET', url: `/dashboard/agents/${agentsOf[target]}` }),
    // Nothing to change; the snapshot makes the target's agent.
    snapshot: (app, world, target) => agentOfTenant(app, world, target),
  },
  {
    route: 'POST /dashboard/agents/:id',
    request: (_world, target, viewer) => ({
      method: 'POST',
      url: `/dashboard/agents/${agentsOf[target]}`,
      form: { ...AGENT_FORM, name: `Renamed by ${viewer}` },
    }),
    snapshot: async (app, world, target) =>
      prismaOf(app).agent.findUnique({ where: { id: await agentOfTenant(app, world, target) } }),
  },
  {
    route: 'POST /dashboard/agents/:id/default',
    request: (_world, target) => ({ method: 'POST', url: `/dashboard/agents/${agentsOf[target]}/default`, form: {} }),
    snapshot: async (app, world, target) => {
      await agentOfTenant(app, world, target);
      return prismaOf(app).account.findUnique({ where: { id: world[target] }, select: { defaultAgentId: true } });
    },
  },
  ...(['archive', 'restore'] as const).map((verb): ObjectRoute => ({
    route: `POST /dashboard/agents/:id/${verb}`,
    request: (_world, target) => ({ method: 'POST', url: `/dashboard/agents/${agentsOf[target]}/${verb}`, form: {} }),
    snapshot: async (app, world, target) =>
      prismaOf(app).agent.findUnique({
        where: { id: await agentOfTenant(app, world, target) },
        select: { archivedAt: true },
      }),
  })),
  {
    route: 'POST /dashboard/agents',
    request: (world, target, viewer) => ({
      method: 'POST',
      url: '/dashboard/agents',
      form: { ...AGENT_FORM, name: `Made by ${viewer}`, account: world[target] },
    }),
    snapshot: (app, world, target) => prismaOf(app).agent.count({ where: { accountId: world[target] } }),
  },
];

/** Pages only agency users have: 404 for client users (a GET of `url`, or `request` with what must not change). */
interface AgencyOnlyRoute {
  route: string;
  url?: string;
  request?(world: World): { method: 'GET' | 'POST'; url: string; form?: Record<string, string> };
  snapshot?(app: App, world: World): Promise<unknown>;
}
const AGENCY_ONLY_ROUTES: AgencyOnlyRoute[] = [
  { route: 'GET /dashboard/clients', url: '/dashboard/clients' },
  {
    route: 'POST /dashboard/clients',
    request: () => ({ method: 'POST', url: '/dashboard/clients', form: { name: 'Made by a client user' } }),
    snapshot: (app) => prismaOf(app).account.count(),
  },
  {
    route: 'GET /dashboard/clients/:id',
    request: (world) => ({ method: 'GET', url: `/dashboard/clients/${world.A1}` }),
  },
  {
    route: 'POST /dashboard/users/invite',
    request: (world) => ({
      method: 'POST',
      url: '/dashboard/users/invite',
      form: { email: 'by-a-client-user@tenancy.example', account: world.A1 },
    }),
    snapshot: (app, world) => usersOf(app, world, 'A1'),
  },
  {
    route: 'POST /dashboard/users/:id/disable',
    request: (world) => ({ method: 'POST', url: `/dashboard/users/${world.users.A1.A1}/disable`, form: {} }),
    snapshot: (app, world) => usersOf(app, world, 'A1'),
  },
  {
    route: 'POST /dashboard/users/:id/link',
    request: (world) => ({ method: 'POST', url: `/dashboard/users/${world.users.A1.A1}/link`, form: {} }),
    snapshot: (app, world) => linksOf(app, world, 'A1'),
  },
  {
    route: 'POST /dashboard/users/:id/role',
    request: (world) => ({
      method: 'POST',
      url: `/dashboard/users/${world.users.A1.A1}/role`,
      form: { role: 'viewer' },
    }),
    snapshot: (app, world) =>
      prismaOf(app).user.findMany({ where: { accountId: world.A1 }, select: { id: true, role: true } }),
  },
  {
    route: 'POST /dashboard/users/:id/enable',
    request: (world) => ({ method: 'POST', url: `/dashboard/users/${world.users.A1.A1}/enable`, form: {} }),
    snapshot: (app, world) => disabledUsersOf(app, world, 'A1'),
  },
  {
    // A client user's own list is /dashboard/do-not-call; the client pages' copy of it is the agency's.
    route: 'POST /dashboard/clients/:id/do-not-call/add',
    request: (world) => ({
      method: 'POST',
      url: `/dashboard/clients/${world.A1}/do-not-call/add`,
      form: { phone_number: '+14155550950' },
    }),
    snapshot: (app, world) => dncEntries(app, world, 'A1'),
  },
  {
    // A client user's own rules are /dashboard/calling-rules; the client pages' copy of them is the agency's.
    route: 'POST /dashboard/clients/:id/calling-rules/hours',
    request: (world) => ({
      method: 'POST',
      url: `/dashboard/clients/${world.A1}/calling-rules/hours`,
      form: { name: 'By a client user', days: 'mon', from: '10:00', to: '18:00' },
    }),
    snapshot: (app, world) => storedRules(app, world, 'A1'),
  },
];

/** Routes that name no object but the viewer's own (why tenancy cannot apply to them). */
const SELF_ROUTES: Record<string, string> = {
  'GET /dashboard': "the viewer's own account",
  'GET /dashboard/': 'a redirect to /dashboard',
  'GET /dashboard/sign-in': 'public',
  'POST /dashboard/sign-in': 'public; the email names a user, answered the same whoever owns it',
  'GET /dashboard/sign-in/choose': 'the accounts the password opened, kept in the session (sign-in-choice.test.ts)',
  'POST /dashboard/sign-in/choose': 'only a user the session was offered (test/dashboard/sign-in-choice.test.ts)',
  'POST /dashboard/sign-out': "the viewer's own session",
  'GET /dashboard/forgot-password': 'public (404 without SMTP_URL)',
  'POST /dashboard/forgot-password':
    'public; the email names users, answered the same whoever owns it (test/dashboard/forgot-password.test.ts)',
  'GET /dashboard/set-password/:token': 'the token is the authority (256 random bits)',
  'POST /dashboard/set-password/:token': 'the token is the authority',
  'GET /dashboard/confirm-password': "the viewer's own password",
  'POST /dashboard/confirm-password': "the viewer's own password",
  'GET /dashboard/account': "the viewer's own user",
  'POST /dashboard/account/password': "the viewer's own user",
  'POST /dashboard/account/sign-out-everywhere': "the viewer's own sessions",
  'POST /dashboard/account/time-zone': "the viewer's own user (test/dashboard/account-time-zone.test.ts)",
  'POST /dashboard/account/times': "the viewer's own session",
  'GET /dashboard/audit-log': "scoped to the viewer's agency or client (tested below)",
  'GET /dashboard/assets/style.css': 'public',
  'GET /dashboard/assets/copy.js': 'public',
  'GET /dashboard/assets/htmx.min.js': 'public',
  'GET /dashboard/assets/live.js': 'public',
  'GET /dashboard/assets/zone-default.js': 'public',
  'GET /dashboard/assets/agent-form.js': 'public',
  'GET /dashboard/assets/favicon.svg': 'public',
  'GET /dashboard/settings/api-webhooks':
    "the viewer's own account (clients' through /dashboard/clients/:id/api-webhooks)",
  'GET /dashboard/settings/api-webhooks/key': "the viewer's own account",
  'POST /dashboard/settings/api-webhooks/key': "the viewer's own account",
  'POST /dashboard/settings/api-webhooks/api-access': "the viewer's own account",
  'POST /dashboard/settings/api-webhooks/default-agent':
    "the viewer's own account; the agent is checked by canUseAgent (test/dashboard/api-webhooks.test.ts)",
  'GET /dashboard/settings/api-webhooks/webhook': "the viewer's own account",
  'POST /dashboard/settings/api-webhooks/webhook': "the viewer's own account",
  'POST /dashboard/settings/api-webhooks/webhook/enable': "the viewer's own account",
  'GET /dashboard/settings/api-webhooks/deliveries': "the viewer's own account's endpoint",
  'POST /dashboard/settings/api-webhooks/deliveries/resend-failed': "the viewer's own account's endpoint",
  'GET /dashboard/agents': 'scoped to the accounts the viewer manages (tested below)',
  'GET /dashboard/agents/new': "a blank form; the accounts it offers are the viewer's (test/dashboard/agents.test.ts)",
  'GET /dashboard/calls': 'scoped to the accounts the viewer manages (test/dashboard/calls.test.ts)',
  'GET /dashboard/calls/export.csv':
    "scoped to the viewer's whole scope, with no id to name another's (test/dashboard/calls-export.test.ts)",
  'POST /dashboard/calls/column':
    "the viewer's own user: the metadata key shown on their Calls list (test/dashboard/calls-search.test.ts)",
  'GET /dashboard/users': 'scoped to the accounts the viewer manages (tested below)',
  'GET /dashboard/do-not-call':
    "the viewer's own account's list (clients' through /dashboard/clients/:id/do-not-call; tested below)",
  'POST /dashboard/do-not-call/add': "the viewer's own account's list",
  'POST /dashboard/do-not-call/remove': "the viewer's own account's list",
  'POST /dashboard/do-not-call/import': "the viewer's own account's list",
  'GET /dashboard/do-not-call/export.csv': "the viewer's own account's list",
  'GET /dashboard/calling-rules':
    "the viewer's own account's rules (clients' through /dashboard/clients/:id/calling-rules; calling-rules.test.ts)",
  'POST /dashboard/calling-rules/settings':
    "the viewer's own agency's settings; 404 for a client user (test/dashboard/calling-rules.test.ts)",
  'POST /dashboard/calling-rules/hours': "the viewer's own account's own hours",
  'POST /dashboard/calling-rules/hours/remove': "the viewer's own account's own hours",
  'GET /dashboard/settings/carrier':
    "the viewer's own account's carrier (clients' through /dashboard/clients/:id/carrier; carrier.test.ts)",
  'POST /dashboard/settings/carrier': "the viewer's own account's carrier",
  'POST /dashboard/settings/carrier/remove': "the viewer's own account's carrier",
  'POST /dashboard/settings/carrier/clients-choose':
    "the viewer's own agency's switch; 404 for a client user (test/dashboard/carrier.test.ts)",
};

/** Who may reach whose objects: the rule of src/domain/tenancy.ts, written out. */
const MAY_MANAGE: Record<Tenant, Tenant[]> = { A: ['A', 'A1', 'A2'], A1: ['A1'], A2: ['A2'], B: ['B'] };
const TENANTS: Tenant[] = ['A', 'A1', 'A2', 'B'];

let app: App;
let dashboardRoutes: string[];
const world = {} as World;
const visitors = {} as Record<Tenant, Visitor>;

beforeAll(async () => {
  await carriers.start();
  const { probe, routes } = await buildProbeApp(
    (scope) => scope.dashboardGuards.requireUser,
    { ...DASHBOARD_ENV, ...carriers.env() },
    () => new Date(),
    (scope) => {
      // A route family of its own, as the dashboard's are: the signed-in hook, and `:id` resolved to an account.
      void scope.register(async (family) => {
        family.addHook('preHandler', family.dashboardGuards.requireUser);
        family.resolveManaged('account', 'id');
        family.get(
          '/accounts/:id',
          { schema: { hide: true }, config: { role: 'viewer' } },
          async (request) => request.managed('account').name,
        );
      });
      // One whose routes are added before it resolves its `:id` (one of them in a plugin of its own): the rule
      // reaches them all the same, whatever the order of registration.
      void scope.register(async (family) => {
        family.addHook('preHandler', family.dashboardGuards.requireUser);
        await family.register(async (inner) => {
          inner.get(
            '/early/:id',
            { schema: { hide: true }, config: { role: 'viewer' } },
            async (request) => request.managed('account').name,
          );
        });
        family.get(
          '/early/:id/name',
          { schema: { hide: true }, config: { role: 'viewer' } },
          async (request) => request.managed('account').name,
        );
        family.resolveManaged('account', 'id');
      });
    },
  );
  app = probe;
  dashboardRoutes = routes;
  world.A = (await createAgency(app.storage, { name: 'Agency A' })).id;
  world.B = (await createAgency(app.storage, { name: 'Agency B' })).id;
  world.A1 = (await createClient(app.storage, { agencyId: world.A, name: 'Client A1', now: app.now() })).id;
  world.A2 = (await createClient(app.storage, { agencyId: world.A, name: 'Client A2', now: app.now() })).id;
  for (const [i, tenant] of TENANTS.entries()) {
    await createUserWithPassword(app.storage, world[tenant], `${tenant.toLowerCase()}@tenancy.example`);
    visitors[tenant] = new Visitor(app);
    visitors[tenant].ip = `10.7.0.${i + 1}`;
    expect((await visitors[tenant].signIn(`${tenant.toLowerCase()}@tenancy.example`)).status).toBe(303);
  }
  world.users = {} as World['users'];
  for (const target of TENANTS) {
    world.users[target] = {} as Record<Tenant, string>;
    for (const viewer of TENANTS) {
      const email = `user-of-${target}-for-${viewer}@tenancy.example`;
      world.users[target][viewer] = (
        await createUser(app.storage, { accountId: world[target], email, actor: { kind: 'operator' }, now: app.now() })
      ).id;
    }
  }
});

describe('tenancy of the dashboard', () => {
  it('classifies every dashboard route (add yours to OBJECT_ROUTES, AGENCY_ONLY_ROUTES or SELF_ROUTES)', () => {
    const classified = new Set([
      ...OBJECT_ROUTES.map((r) => r.route),
      ...AGENCY_ONLY_ROUTES.map((r) => r.route),
      ...Object.keys(SELF_ROUTES),
    ]);
    const routes = dashboardRoutes.filter((r) => / \/dashboard/.test(r));
    expect(routes.length).toBeGreaterThan(10);
    expect(routes.filter((r) => !classified.has(r))).toEqual([]);
  });

  for (const route of OBJECT_ROUTES) {
    for (const viewer of TENANTS) {
      for (const target of TENANTS) {
        const allowed = (route.reach ?? MAY_MANAGE)[viewer].includes(target);
        it(`${route.route}: a user of ${viewer} on ${target}'s object gets ${allowed ? 'it' : '404 and changes nothing'}`, async () => {
          const before = await route.snapshot?.(app, world, target);
          const { method, url, form, file } = route.request(world, target, viewer);
          const res =
            method === 'GET'
              ? await visitors[viewer].get(url)
              : file
                ? await visitors[viewer].get('/dashboard/account').then(() => visitors[viewer].upload(url, file, form))
                : await visitors[viewer].submit('/dashboard/account', url, form);
          if (allowed) {
            expect(res.status).toBeLessThan(400);
            return;
          }
          expect(res.status).toBe(404);
          expect(res.body).toContain('There is no such page.');
          expect(await route.snapshot?.(app, world, target)).toEqual(before);
        });
      }
    }
  }

  it("answers an id that is no account the same 404 as another tenant's", async () => {
    expect((await visitors.A.get('/probe/accounts/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await visitors.A.get('/probe/accounts/not-a-uuid')).status).toBe(404);
  });

  for (const entry of AGENCY_ONLY_ROUTES) {
    it(`${entry.route} is 404 for client users`, async () => {
      const { method, url, form } = entry.request?.(world) ?? { method: 'GET' as const, url: entry.url! };
      const before = await entry.snapshot?.(app, world);
      const res =
        method === 'GET' ? await visitors.A1.get(url) : await visitors.A1.submit('/dashboard/account', url, form);
      expect(res.status).toBe(404);
      expect(await entry.snapshot?.(app, world)).toEqual(before);
    });
  }

  it('lists on the Users page the users of the accounts the viewer manages, and no others', async () => {
    for (const viewer of TENANTS) {
      const page = (await visitors[viewer].get('/dashboard/users')).body;
      for (const target of TENANTS) {
        expect(page.includes(`user-of-${target.toLowerCase()}-for-`), `${viewer} sees ${target}'s users`).toBe(
          MAY_MANAGE[viewer].includes(target),
        );
      }
    }
  });

  it('lists on the Agents page the agents of the accounts the viewer manages, and no others', async () => {
    for (const target of TENANTS)
      await createAgent(app.storage, {
        accountId: world[target],
        name: `listed-agent-of-${target}-end`,
        now: app.now(),
      });
    for (const viewer of TENANTS) {
      const page = (await visitors[viewer].get('/dashboard/agents')).body;
      for (const target of TENANTS) {
        expect(page.includes(`listed-agent-of-${target}-end`), `${viewer} sees ${target}'s agent`).toBe(
          MAY_MANAGE[viewer].includes(target),
        );
      }
    }
  });

  it("shows each user their own account's do-not-call list on /dashboard/do-not-call, and no other", async () => {
    for (const [i, tenant] of TENANTS.entries())
      await insertDoNotCallEntry(prismaOf(app), {
        data: {
          accountId: world[tenant],
          phoneNumber: `+1415555098${i}`,
          reason: `own-of-${tenant}-end`,
          addedBy: 'operator',
        },
      });
    for (const viewer of TENANTS) {
      const page = (await visitors[viewer].get('/dashboard/do-not-call')).body;
      for (const target of TENANTS)
        expect(page.includes(`own-of-${target}-end`), `${viewer} sees ${target}'s list`).toBe(viewer === target);
    }
  });

  it('shows each user the audit entries of the accounts they manage, and no others', async () => {
    const at = new Date();
    for (const tenant of TENANTS)
      await audit(app.storage, world[tenant], { kind: 'operator' }, 'user_created', at, {
        marker: `entry-of-${tenant}-end`,
      });
    for (const viewer of TENANTS) {
      const page = (await visitors[viewer].get('/dashboard/audit-log')).body;
      for (const target of TENANTS) {
        expect(page.includes(`entry-of-${target}-end`), `${viewer} sees ${target}'s entry`).toBe(
          MAY_MANAGE[viewer].includes(target),
        );
      }
    }
  });
});
