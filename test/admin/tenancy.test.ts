// Tenancy inside src/admin, on a real database: every function that takes an id or an account answers a user of
// another tenant (a client of another agency, a sibling client, a client acting on its agency's object) as it answers
// a missing object, and changes nothing; an agency's user reaches its clients' objects; the operator reaches all.
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient, generateKey, OPERATOR, setApiAccess, setPlan } from '../../src/admin/accounts.js';
import { createAgent, setAgentArchived, setDefaultAgent, updateAgent } from '../../src/admin/agents.js';
import type { Actor } from '../../src/admin/audit.js';
import { cancelCall, cancelCalls, listCalls, showCall } from '../../src/admin/calls.js';
import {
  putCallingHours,
  removeCallingHours,
  setCallingRules,
  showCallingRules,
} from '../../src/admin/calling-rules.js';
import { importDoNotCall } from '../../src/admin/do-not-call-import.js';
import { addToDoNotCall, listDoNotCall, removeFromDoNotCall } from '../../src/admin/do-not-call.js';
import { AdminError } from '../../src/admin/errors.js';
import { newSignInLink, resolveUser, sendAuditedMail } from '../../src/admin/user-links.js';
import { createUser, disableUser, enableUser, inviteUser } from '../../src/admin/users.js';
import {
  changeWebhookUrl,
  enableWebhook,
  NoSuchDelivery,
  replayDelivery,
  resendFailedDeliveries,
  setWebhook,
  showWebhook,
} from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import type { MailMessage } from '../../src/mail/mailer.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceDelivery, forceEndpoint } from '../helpers/seed.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

const NOW = new Date('2055-03-01T10:00:00Z');
const HOOK = 'https://hooks.example.com/calls';

let app: App;
/** An account of the world, with its default agent, its key and a user of it. */
interface Account extends Tenant {
  kind: 'agency' | 'client';
  actor: Actor;
}
/** Agency A with its clients A1 and A2; agency B with its client B1. */
const world = {} as Record<'a' | 'a1' | 'a2' | 'b' | 'b1', Account>;

let emails = 0;
const email = () => `person${++emails}@tenancy.example`;

async function account(kind: 'agency' | 'client', tenant: Tenant): Promise<Account> {
  const { id: userId } = await createUser(app.storage, {
    accountId: tenant.accountId,
    email: email(),
    actor: OPERATOR,
    now: NOW,
  });
  return { ...tenant, kind, actor: { kind: 'user', userId, ip: null, scope: { accountId: tenant.accountId, kind } } };
}

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => NOW }));
  const a = await createTenant(app.storage);
  const b = await createTenant(app.storage);
  world.a = await account('agency', a);
  world.a1 = await account('client', await createClientTenant(app.storage, a.accountId));
  world.a2 = await account('client', await createClientTenant(app.storage, a.accountId));
  world.b = await account('agency', b);
  world.b1 = await account('client', await createClientTenant(app.storage, b.accountId));
});

/**
 * Every table's rows, as one text: equal before and after when nothing changed. A key's last use is left out: it is
 * written after a trigger's answer, whenever the write comes.
 */
async function fingerprint(): Promise<string> {
  const tables = await prismaOf(app).$queryRaw<{ name: string }[]>`
    SELECT tablename AS name FROM pg_tables
     WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations' ORDER BY 1`;
  const rows: unknown[] = [];
  for (const { name } of tables)
    rows.push(
      await prismaOf(app).$queryRawUnsafe(
        `SELECT count(*)::int AS n, md5(coalesce(string_agg((to_jsonb(x) - 'last_used_at')::text, '|' ORDER BY x::text), '')) AS h
           FROM "${name}" x`,
      ),
    );
  return JSON.stringify(rows);
}

/**
 * A waiting call of the account (the dispatcher is off: it waits), by a key of its own on its first agent: earlier
 * cases replace its keys and its default agent.
 */
async function waitingCall(owner: Account): Promise<string> {
  await setApiAccess(app.storage, owner.accountId, true, OPERATOR, NOW);
  const { key } = await generateKey(app.storage, owner.accountId, OPERATOR, { now: NOW });
  const res = await trigger(app, key, { phone_number: '+14155552671', agent_id: owner.agentId });
  expect(res.statusCode, res.body).toBe(200);
  return callIdOf(res);
}

/** A failed delivery of the account's endpoint (a canceled call's call.failed, given up on). */
async function failedDelivery(owner: Account): Promise<string> {
  await setWebhook(app.storage, owner.accountId, HOOK, { allowPrivate: false, now: NOW }, OPERATOR);
  await cancelCall(app.storage, await waitingCall(owner), OPERATOR, NOW);
  const endpoint = await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: owner.accountId } });
  const delivery = await prismaOf(app).webhookDelivery.findFirstOrThrow({
    where: { endpointId: endpoint.id },
    orderBy: { createdAt: 'desc' },
  });
  await forceDelivery(prismaOf(app), delivery.id, { status: 'failed' });
  return delivery.id;
}

/** A user of the account, made by the operator. */
async function userOf(owner: Account): Promise<string> {
  return (await createUser(app.storage, { accountId: owner.accountId, email: email(), actor: OPERATOR, now: NOW })).id;
}

const sent: MailMessage[] = [];
/** The SMTP side of sendAuditedMail: what it was asked to send. */
const mailer = {
  send: (message: MailMessage) => {
    sent.push(message);
    return Promise.resolve(true);
  },
};

/**
 * One admin function on one object: `prepare` makes the object on an account (as the operator) and `run` acts on it
 * as `actor`; `missing` is what a missing object is answered with (its class and message).
 */
interface Case<T> {
  name: string;
  prepare: (owner: Account) => Promise<T>;
  run: (actor: Actor, target: T, owner: Account) => Promise<unknown>;
  missing: (target: T, owner: Account) => AdminError;
}
const of = <T>(c: Case<T>) => c as Case<unknown>;

const noAccount = (_target: unknown, owner: Account) => new AdminError(`No account ${owner.accountId}`);
const noCall = (id: unknown) => new AdminError(`No call ${id as string}`);
const noUser = (id: unknown) => new AdminError(`No user ${id as string}`);
const noAgent = (id: unknown) => new AdminError(`No agent ${id as string}`);
const none = () => Promise.resolve(null);

const CASES: Case<unknown>[] = [
  of({
    name: 'generateKey',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) => generateKey(app.storage, o.accountId, actor, { now: NOW }),
  }),
  of({
    name: 'setApiAccess',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) => setApiAccess(app.storage, o.accountId, false, actor, NOW),
  }),
  of({
    name: 'createAgent',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) => createAgent(app.storage, { accountId: o.accountId, name: 'New agent', now: NOW }, actor),
  }),
  of({
    name: 'setDefaultAgent',
    prepare: (o) => createAgent(app.storage, { accountId: o.accountId, name: 'Second', now: NOW }, OPERATOR),
    missing: noAccount,
    run: (actor, agent, o) => setDefaultAgent(app.storage, o.accountId, agent.id, actor, NOW),
  }),
  of({
    name: 'updateAgent',
    prepare: (o) => Promise.resolve(o.agentId),
    missing: noAgent,
    run: (actor, agentId) => updateAgent(app.storage, agentId, { name: `Renamed ${++emails}`, now: NOW }, actor),
  }),
  of({
    name: 'updateAgent (hand-off)',
    prepare: (o) => Promise.resolve(o.agentId),
    missing: noAgent,
    run: (actor, agentId) =>
      updateAgent(
        app.storage,
        agentId,
        {
          handoff: 'sip',
          sipUri: `sip:bot-${++emails}@sip.tenancy.example`,
          sipHeaders: ['X-Bot=sales'],
          streamUrl: 'wss://bots.tenancy.example/stream',
          streamParameters: [`bot=${emails}`],
          now: NOW,
        },
        actor,
      ),
  }),
  of({
    name: 'createAgent (hand-off)',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) =>
      createAgent(
        app.storage,
        { accountId: o.accountId, name: 'SIP agent', sipUri: 'sip:bot@sip.tenancy.example', handoff: 'sip', now: NOW },
        actor,
      ),
  }),
  of({
    name: 'setAgentArchived',
    prepare: async (o) =>
      (await createAgent(app.storage, { accountId: o.accountId, name: 'Spare', now: NOW }, OPERATOR)).id,
    missing: noAgent,
    run: (actor, agentId) => setAgentArchived(app.storage, agentId, true, actor, NOW),
  }),
  of({
    name: 'listCalls',
    prepare: waitingCall,
    missing: noAccount,
    run: (actor, _t, o) => listCalls(app.storage, o.accountId, undefined, actor),
  }),
  of({ name: 'showCall', prepare: waitingCall, missing: noCall, run: (actor, id) => showCall(app.storage, id, actor) }),
  of({
    name: 'cancelCall',
    prepare: waitingCall,
    missing: noCall,
    run: (actor, id) => cancelCall(app.storage, id, actor, NOW),
  }),
  of({
    name: 'cancelCalls',
    prepare: waitingCall,
    missing: noCall,
    // cancelCalls answers each call rather than throw: not_found is its missing call, here made the AdminError.
    run: async (actor, id) => {
      const [outcome] = await cancelCalls(app.storage, [id], actor, NOW);
      if (outcome?.result === 'not_found') throw new AdminError(`No call ${id}`);
      expect(outcome?.result).toBe('canceled');
    },
  }),
  of({
    name: 'addToDoNotCall',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) =>
      // Not the waiting calls' number: later cases still place calls to it.
      addToDoNotCall(app.storage, { accountId: o.accountId, phoneNumber: '+14155552673', actor, now: NOW }),
  }),
  of({
    name: 'removeFromDoNotCall',
    prepare: (o) =>
      addToDoNotCall(app.storage, { accountId: o.accountId, phoneNumber: '+14155552672', actor: OPERATOR, now: NOW }),
    missing: noAccount,
    run: async (actor, _t, o) => {
      const done = await removeFromDoNotCall(app.storage, {
        accountId: o.accountId,
        phoneNumber: '+14155552672',
        actor,
        now: NOW,
      });
      expect(done.removed).toBe(true);
    },
  }),
  of({
    name: 'listDoNotCall',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) => listDoNotCall(app.storage, o.accountId, actor),
  }),
  of({
    name: 'importDoNotCall',
    prepare: none,
    missing: noAccount,
    run: async (actor, _t, o) => {
      const file = Buffer.from(`phone_number,reason\n+1415555${2700 + ++emails},asked\n`);
      const outcome = await importDoNotCall(app.storage, {
        accountId: o.accountId,
        file,
        actor,
        now: NOW,
        maxBytes: 1024,
      });
      expect(outcome).toMatchObject({ ok: true, added: 1 });
    },
  }),
  of({
    name: 'createUser',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) => createUser(app.storage, { accountId: o.accountId, email: email(), actor, now: NOW }),
  }),
  of({
    name: 'inviteUser',
    prepare: none,
    missing: noAccount,
    // Only a signed-in user invites: the operator's is createUser.
    run: (actor, _t, o) =>
      actor.kind === 'user'
        ? inviteUser(app.storage, { accountId: o.accountId, email: email(), invitedBy: actor, now: NOW })
        : createUser(app.storage, { accountId: o.accountId, email: email(), actor, now: NOW }),
  }),
  of({
    name: 'disableUser',
    prepare: userOf,
    missing: noUser,
    run: (actor, id) => disableUser(app.storage, id, actor, NOW),
  }),
  of({
    name: 'enableUser',
    prepare: async (o) => {
      const id = await userOf(o);
      await disableUser(app.storage, id, OPERATOR, NOW);
      return id;
    },
    missing: noUser,
    run: async (actor, id) =>
      expect(await enableUser(app.storage, id, actor, NOW)).toMatchObject({ already_enabled: false }),
  }),
  of({
    name: 'newSignInLink',
    prepare: userOf,
    missing: noUser,
    run: (actor, userId) => newSignInLink(app.storage, { userId, actor, now: NOW }),
  }),
  of({
    name: 'resolveUser (by id)',
    prepare: userOf,
    missing: noUser,
    run: (actor, id) => resolveUser(app.storage, id, actor),
  }),
  of({
    name: 'resolveUser (by email)',
    prepare: async (o) => {
      const address = email();
      await createUser(app.storage, { accountId: o.accountId, email: address, actor: OPERATOR, now: NOW });
      return address;
    },
    missing: noUser,
    run: (actor, address) => resolveUser(app.storage, address, actor),
  }),
  of({
    name: 'sendAuditedMail',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) =>
      sendAuditedMail(app.storage, mailer, {
        accountId: o.accountId,
        actor,
        kind: 'sign_in_link',
        message: { to: 'someone@tenancy.example', subject: 'A link', text: 'Hello' },
        now: () => NOW,
      }),
  }),
  of({
    name: 'setWebhook',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) => setWebhook(app.storage, o.accountId, HOOK, { allowPrivate: false, now: NOW }, actor),
  }),
  of({
    name: 'changeWebhookUrl',
    prepare: async (o) => {
      await setWebhook(app.storage, o.accountId, HOOK, { allowPrivate: false, now: NOW }, OPERATOR);
      return (await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: o.accountId } })).updatedAt;
    },
    missing: noAccount,
    run: (actor, replaces, o) =>
      changeWebhookUrl(
        app.storage,
        o.accountId,
        `${HOOK}/${++emails}`,
        { allowPrivate: false, replaces, now: NOW },
        actor,
      ),
  }),
  of({
    name: 'showWebhook',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) => showWebhook(app.storage, o.accountId, actor),
  }),
  of({
    name: 'enableWebhook',
    prepare: async (o) => {
      await setWebhook(app.storage, o.accountId, HOOK, { allowPrivate: false, now: NOW }, OPERATOR);
      await forceEndpoint(prismaOf(app), { accountId: o.accountId }, { enabled: false, disabledReason: '410 Gone' });
    },
    missing: noAccount,
    run: async (actor, _t, o) =>
      expect(await enableWebhook(app.storage, o.accountId, actor, NOW)).toMatchObject({
        changed_at: NOW.toISOString(),
      }),
  }),
  of({
    name: 'replayDelivery',
    prepare: failedDelivery,
    missing: (id) => new NoSuchDelivery(`No delivery ${id}`),
    run: (actor, id) => replayDelivery(app.storage, id, actor, { now: NOW }),
  }),
  of({
    name: 'resendFailedDeliveries',
    prepare: failedDelivery,
    missing: noAccount,
    run: async (actor, _t, o) =>
      expect((await resendFailedDeliveries(app.storage, o.accountId, new Date(0), actor, NOW)).resent).toBeGreaterThan(
        0,
      ),
  }),
  of({
    name: 'showCallingRules',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) => showCallingRules(app.storage, o.accountId, actor),
  }),
  of({
    name: 'putCallingHours',
    prepare: none,
    missing: noAccount,
    run: (actor, _t, o) =>
      putCallingHours(app.storage, {
        accountId: o.accountId,
        hours: { name: `Hours ${++emails}`, days: 'mon-fri', from: '09:00', to: '17:00' },
        actor,
        now: NOW,
      }),
  }),
  of({
    name: 'removeCallingHours',
    prepare: async (o) =>
      (
        await putCallingHours(app.storage, {
          accountId: o.accountId,
          hours: { name: `Hours ${++emails}`, days: 'sat', from: '10:00', to: '12:00' },
          actor: OPERATOR,
          now: NOW,
        })
      ).rule.name,
    missing: noAccount,
    run: async (actor, name, o) => {
      const done = await removeCallingHours(app.storage, {
        accountId: o.accountId,
        name: name,
        actor,
        now: NOW,
      });
      expect(done.removed).toBe(true);
    },
  }),
];

/** `run` as `actor` is answered as for a missing object, and nothing in the database changes. */
async function refused<T>(c: Case<T>, actor: Actor, owner: Account) {
  const target = await c.prepare(owner);
  const before = await fingerprint();
  const mails = sent.length;
  await expect(c.run(actor, target, owner)).rejects.toThrow(c.missing(target, owner));
  expect(await fingerprint()).toBe(before);
  expect(sent.length).toBe(mails);
}

/** `run` as `actor` does what it does for the object's own users: it neither throws nor is refused. */
async function reached<T>(c: Case<T>, actor: Actor, owner: Account) {
  const target = await c.prepare(owner);
  await c.run(actor, target, owner);
}

describe.each(CASES)('$name', (c) => {
  it("is refused as missing to a client of another agency, a sibling client, and a client on its agency's object", async () => {
    await refused(c, world.b1.actor, world.a1);
    await refused(c, world.a2.actor, world.a1);
    await refused(c, world.a1.actor, world.a);
    await refused(c, world.b.actor, world.a1);
  });

  it("reaches a client's object for its agency's user, and any tenant's for the operator", async () => {
    await reached(c, world.a.actor, world.a1);
    await reached(c, OPERATOR, world.b1);
  });
});

describe('createClient and setPlan (an agency is their object)', () => {
  const client = (actor: Actor, agencyId: string) =>
    createClient(app.storage, { agencyId, name: 'New client', now: NOW }, actor);

  it("refuse a client's user on its own agency and another agency's user, as for a missing agency", async () => {
    for (const actor of [world.a1.actor, world.b.actor, world.b1.actor]) {
      const before = await fingerprint();
      await expect(client(actor, world.a.accountId)).rejects.toThrow(new AdminError(`No account ${world.a.accountId}`));
      await expect(setPlan(app.storage, world.a.accountId, 'starter', actor)).rejects.toThrow(
        new AdminError(`No account ${world.a.accountId}`),
      );
      expect(await fingerprint()).toBe(before);
    }
  });

  it("reach the agency's own user, and the operator on any agency", async () => {
    await client(world.a.actor, world.a.accountId);
    await client(OPERATOR, world.b.accountId);
    expect(await setPlan(app.storage, world.b.accountId, 'agency', OPERATOR)).toEqual({
      id: world.b.accountId,
      plan: 'agency',
    });
  });
});

describe('setCallingRules (an agency is its object; a client follows its agency)', () => {
  const set = (actor: Actor, accountId: string) =>
    setCallingRules(app.storage, { accountId, settings: { enabled: true, cap24h: 3 }, actor, now: NOW });

  it("refuses a client's user on its own agency and another agency's user, as for a missing agency", async () => {
    for (const actor of [world.a1.actor, world.b.actor, world.b1.actor]) {
      const before = await fingerprint();
      await expect(set(actor, world.a.accountId)).rejects.toThrow(new AdminError(`No account ${world.a.accountId}`));
      expect(await fingerprint()).toBe(before);
    }
  });

  it("refuses a client's settings to everyone (they are its agency's), and reaches the agency's user and the operator", async () => {
    const before = await fingerprint();
    for (const actor of [world.a.actor, world.a1.actor, OPERATOR])
      await expect(set(actor, world.a1.accountId)).rejects.toThrow('is a client: its calling rules are its agency');
    expect(await fingerprint()).toBe(before);
    expect((await set(world.a.actor, world.a.accountId)).settings.enabled).toBe(true);
    expect((await set(OPERATOR, world.b.accountId)).settings.cap).toEqual({
      per_24h: 3,
      per_7d: null,
      scope: 'agency',
    });
  });
});

describe('setDefaultAgent', () => {
  it("names another tenant's agent as missing, even on the actor's own account", async () => {
    const before = await fingerprint();
    await expect(
      setDefaultAgent(app.storage, world.a2.accountId, world.a1.agentId, world.a2.actor, NOW),
    ).rejects.toThrow(new AdminError(`No agent ${world.a1.agentId}`));
    expect(await fingerprint()).toBe(before);
  });
});
