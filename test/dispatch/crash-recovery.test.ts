// The real process, killed with SIGKILL in the middle of 25 calls and started again: every call still ends exactly
// once, none is dialled twice, and the account never has more than 10 active calls; retried calls killed between
// attempts and during their second lose no attempt and dial none twice. Simulated calls that were under way while no
// process ran keep their scripted length. A terminal event waiting for the runtime's result, and a result waiting for
// its call's end, survive a SIGKILL: each call still gets one terminal event, carrying its result.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPrisma } from '../../src/storage/database.js';
import { freshDatabase, storageOf } from '../helpers/database.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { buildTestApp, closeTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, updateAgentSettings } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { httpsRequest, startServer } from '../helpers/server-process.js';
import { json, type TriggerResponse, type WebhookEvent } from '../helpers/json.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceCalls } from '../helpers/seed.js';
import { CONTEXT_TOKEN_KEY_PURPOSE } from '../../plugins/context-tokens.js';
import { signContextToken } from '../../src/domain/context-token.js';
import {
  ACCOUNT_SID,
  AGENT_PHONE,
  PUBLIC,
  signLikeTwilio,
  TOKEN,
  TwilioStandIn,
  twilioEnv,
} from '../helpers/twilio.js';
import { waitFor } from '../helpers/wait.js';

/** The servers' environment: short rings and talks, a short lease, each dial logged under `dataDir`. */
function serverEnv(url: string, dataDir: string) {
  const dialLog = path.join(dataDir, 'dials.log');
  return {
    dialLog,
    env: {
      DATA_DIR: dataDir,
      DATABASE_URL: url,
      SIMULATED_RING_MS: '200',
      SIMULATED_TALK_MS: '1500',
      SIMULATED_DIAL_LOG: dialLog,
      DISPATCH_LEASE_MS: '2000',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '1000',
    },
  };
}

describe('crash recovery of dispatch', () => {
  it('SIGKILL during a run of 25 calls: after a restart all end exactly once, each dialled at most once', async () => {
    const { url } = await freshDatabase();
    const prisma = createPrisma(url, { max: 2 });
    const tenant = await createTenant(prisma);
    const receiver = await startReceiver();
    await setWebhook(storageOf(prisma), tenant.accountId, receiver.url, { allowPrivate: true, now: new Date() });
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-crash-'));
    const { dialLog, env } = serverEnv(url, dataDir);

    const first = await startServer(env);
    const accepted: string[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await httpsRequest(first.port, '/api/v1/calls/trigger', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ phone_number: '+14155552671', metadata: { n: i } }),
      });
      expect(res.status).toBe(200);
      accepted.push(json<TriggerResponse>(res.body).call_id);
    }
    await new Promise((r) => setTimeout(r, 700));
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    const midway = await prisma.call.groupBy({ by: ['status'], _count: true, where: { accountId: tenant.accountId } });

    const second = await startServer(env);
    const deadline = Date.now() + 60_000;
    let calls;
    for (;;) {
      calls = await prisma.call.findMany({ where: { accountId: tenant.accountId }, include: { events: true } });
      const terminalHooks = new Set(
        receiver.received
          .map((r) => json<WebhookEvent>(r.body))
          .filter((e) => e.type !== 'call.started')
          .map((e) => e.data.call_id),
      );
      if (
        (calls.every((c) => c.status === 'completed' || c.status === 'failed') && terminalHooks.size === 25) ||
        Date.now() > deadline
      )
        break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await second.stop('SIGTERM')).toBe(0);

    expect(midway.some((g) => g.status === 'initiated' || g.status === 'dialing' || g.status === 'in_progress')).toBe(
      true,
    );
    expect(calls.map((c) => c.id).sort()).toEqual([...accepted].sort());
    for (const call of calls) {
      expect(['completed', 'failed']).toContain(call.status);
      expect(call.events.filter((e) => e.toStatus === 'completed' || e.toStatus === 'failed')).toHaveLength(1);
    }
    // Webhooks: exactly one terminal event per call (by webhook-id; a retry may repeat an id, never add one).
    const terminal = new Map<string, Set<string>>();
    for (const r of receiver.received) {
      const event = json<WebhookEvent>(r.body);
      if (event.type === 'call.started') continue;
      terminal.set(
        event.data.call_id,
        (terminal.get(event.data.call_id) ?? new Set()).add(String(r.headers['webhook-id'])),
      );
    }
    expect([...terminal.keys()].sort()).toEqual([...accepted].sort());
    for (const ids of terminal.values()) expect(ids.size).toBe(1);
    const dials = (await fs.readFile(dialLog, 'utf8')).trim().split('\n');
    expect(new Set(dials).size).toBe(dials.length);
    // Peak concurrency from the calls' own times, across both processes.
    const edges = calls
      .flatMap((c) =>
        c.startedAt
          ? [
              [c.startedAt.getTime(), 1],
              [c.endedAt!.getTime(), -1],
            ]
          : [],
      )
      .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    let active = 0;
    let peak = 0;
    for (const [, delta] of edges) peak = Math.max(peak, (active += delta!));
    expect(peak).toBeLessThanOrEqual(10);
    await prisma.$disconnect();
  }, 120_000);
});

describe('crash recovery of retried calls', () => {
  it('SIGKILL between attempts and during the second: no attempt is dialled twice, every call ends once', async () => {
    const { url } = await freshDatabase();
    const prisma = createPrisma(url, { max: 2 });
    const tenant = await createTenant(prisma);
    // Two attempts, busy retried after a minute (the minute passes while no process runs: see below).
    await updateAgentSettings(storageOf(prisma), tenant.agentId, {
      maxAttempts: 2,
      retryOn: ['busy'],
      retryWaits: [1],
    });
    const receiver = await startReceiver();
    await setWebhook(storageOf(prisma), tenant.accountId, receiver.url, { allowPrivate: true, now: new Date() });
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-crash-retries-'));
    const { dialLog, env } = serverEnv(url, dataDir);
    const triggerFrom = async (port: number, phone: string) => {
      const res = await httpsRequest(port, '/api/v1/calls/trigger', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ phone_number: phone }),
      });
      expect(res.status).toBe(200);
      return json<TriggerResponse>(res.body).call_id;
    };
    const calls = () => prisma.call.findMany({ where: { accountId: tenant.accountId }, include: { events: true } });

    const first = await startServer(env);
    const retried: string[] = []; // busy, then answered
    const twiceBusy: string[] = [];
    const once: string[] = [];
    for (let i = 0; i < 6; i++) retried.push(await triggerFrom(first.port, '+15005550005'));
    for (let i = 0; i < 3; i++) twiceBusy.push(await triggerFrom(first.port, '+15005550001'));
    for (let i = 0; i < 4; i++) once.push(await triggerFrom(first.port, '+14155552671'));
    const all = [...retried, ...twiceBusy, ...once];
    // Killed once every busy first attempt waits for its next one.
    const between = new Set([...retried, ...twiceBusy]);
    for (const deadline = Date.now() + 30_000; ;) {
      const rows = await calls();
      if (rows.filter((c) => between.has(c.id) && c.status === 'initiated' && c.attempt === 2).length === between.size)
        break;
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    // The minute passes while no process runs.
    const due = new Date();
    await forceCalls(prisma, { id: { in: [...between] } }, { nextAttemptAt: due, notBefore: due });

    // The next process dials the second attempts, and is killed while they ring or talk: once the provider's id of
    // one retried call's second attempt is recorded (it then rings or talks for 1.7 s), so at least that attempt is
    // under way and must end as scripted after the restart. Killing at a fixed delay instead could find every second
    // attempt between asking for the dial and recording it on a slow host, and all of them would fail provider_error.
    const second = await startServer(env);
    for (const deadline = Date.now() + 30_000; ;) {
      const rows = await calls();
      if (rows.some((c) => retried.includes(c.id) && c.attempt === 2 && c.providerCallId !== null)) break;
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await second.stop('SIGKILL')).toBe('SIGKILL');

    const third = await startServer(env);
    let rows: Awaited<ReturnType<typeof calls>>;
    const terminalWebhooks = () =>
      new Set(
        receiver.received
          .map((r) => json<WebhookEvent>(r.body))
          .filter((e) => e.type !== 'call.started')
          .map((e) => e.data.call_id),
      );
    // Every event written is heard, not only the terminal ones: a call.started the second process was sending when it
    // was killed stays leased to it (WEBHOOK_TIMEOUT_MS * 2 + 5 s) and only then goes again, after the call's end.
    const undelivered = () => prisma.webhookDelivery.count({ where: { callId: { in: all }, status: 'pending' } });
    for (const deadline = Date.now() + 60_000; ;) {
      rows = await calls();
      if (
        rows.every((c) => c.status === 'completed' || c.status === 'failed') &&
        terminalWebhooks().size === all.length &&
        (await undelivered()) === 0
      )
        break;
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await third.stop('SIGTERM')).toBe(0);

    const byId = new Map(rows.map((c) => [c.id, c]));
    expect([...byId.keys()].sort()).toEqual([...all].sort());
    for (const call of rows)
      expect(call.events.filter((e) => e.toStatus === 'completed' || e.toStatus === 'failed')).toHaveLength(1);
    // An attempt ends as scripted, unless a process died between asking to dial it and recording the answer: then it
    // fails with provider_error rather than risk ringing twice. The calls of one attempt may meet either kill too:
    // they wait for the slots the busy ones free, so the first kill can find one dialling.
    const outcomesOf = (id: string) => (byId.get(id)!.attemptOutcomes as { outcome: string }[]).map((o) => o.outcome);
    for (const id of retried)
      expect([
        ['busy', 'completed'],
        ['busy', 'provider_error'],
      ]).toContainEqual(outcomesOf(id));
    for (const id of twiceBusy)
      expect([
        ['busy', 'busy'],
        ['busy', 'provider_error'],
      ]).toContainEqual(outcomesOf(id));
    for (const id of once) expect([['completed'], ['provider_error']]).toContainEqual(outcomesOf(id));
    expect(rows.filter((c) => retried.includes(c.id) && c.status === 'completed').length).toBeGreaterThan(0);

    // No attempt dialled twice across the three processes, none but these calls' attempts, and each that ended as
    // scripted dialled. One that ended provider_error may not have been: a kill can land after the dispatcher asked
    // for the dial and before the dialler placed it.
    const dials = (await fs.readFile(dialLog, 'utf8')).trim().split('\n');
    expect(new Set(dials).size).toBe(dials.length);
    const attempts = all.flatMap((id) =>
      outcomesOf(id).map((outcome, i) => ({ key: i === 0 ? id : `${id}/${i + 1}`, outcome })),
    );
    expect(dials.filter((d) => !attempts.some((a) => a.key === d))).toEqual([]);
    expect(attempts.filter((a) => a.outcome !== 'provider_error' && !dials.includes(a.key))).toEqual([]);

    // The receiver: per call, one call.started per attempt and one terminal event (by webhook-id: a retry of a
    // delivery repeats its id, never adds one).
    const heard = new Map<string, Map<string, string>>();
    for (const r of receiver.received) {
      const event = json<WebhookEvent>(r.body);
      const key = `${event.type}#${event.data.attempt}`;
      const ids = heard.get(event.data.call_id) ?? new Map<string, string>();
      expect(ids.get(key) ?? String(r.headers['webhook-id'])).toBe(String(r.headers['webhook-id']));
      heard.set(event.data.call_id, ids.set(key, String(r.headers['webhook-id'])));
    }
    for (const id of between) {
      const terminal = byId.get(id)!.status === 'completed' ? 'call.completed' : 'call.failed';
      expect([...heard.get(id)!.keys()].sort()).toEqual(['call.started#1', 'call.started#2', `${terminal}#2`].sort());
    }
    for (const id of once) {
      const terminal = byId.get(id)!.status === 'completed' ? 'call.completed' : 'call.failed';
      expect([...heard.get(id)!.keys()].sort()).toEqual([`${terminal}#1`, 'call.started#1'].sort());
    }
    await prisma.$disconnect();
  }, 150_000);
});

describe('simulated calls across a restart', () => {
  it('a call ringing or talking when the process stops ends at its scripted time, whenever the next process advances it', async () => {
    const RING_MS = 1_000;
    const TALK_MS = 5_000;
    const env = { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: String(RING_MS), SIMULATED_TALK_MS: String(TALK_MS) };
    const t0 = new Date('2054-11-21T10:00:00.000Z');
    let firstClock = t0;
    const first = await buildTestApp({ env, clock: () => firstClock });
    const tenant = await createTenant(first.app.storage);
    await setWebhook(first.app.storage, tenant.accountId, 'https://hooks.example.com/calls', {
      allowPrivate: false,
      now: new Date(),
    });

    const talking = callIdOf(await trigger(first.app, tenant.key));
    await first.app.dispatcher!.settle();
    firstClock = new Date(t0.getTime() + RING_MS);
    await first.app.dispatcher!.settle();
    // Dialled while the first call talks: these two are still ringing when the process stops.
    const t1 = new Date(t0.getTime() + 1_500);
    firstClock = t1;
    const ringing = callIdOf(await trigger(first.app, tenant.key));
    const busy = callIdOf(await trigger(first.app, tenant.key, { phone_number: '+15005550001' }));
    await first.app.dispatcher!.settle();
    const byId = async () =>
      new Map(
        (await prismaOf(first.app).call.findMany({ where: { accountId: tenant.accountId } })).map((c) => [c.id, c]),
      );
    const before = await byId();
    expect(before.get(talking)).toMatchObject({ status: 'in_progress', answeredAt: new Date(t0.getTime() + RING_MS) });
    expect(before.get(ringing)).toMatchObject({ status: 'dialing', startedAt: t1 });
    expect(before.get(busy)).toMatchObject({ status: 'dialing', startedAt: t1 });
    await closeTestApp(first.app);

    // The next process runs 724 s later.
    const later = await buildTestApp({
      env,
      databaseUrl: first.databaseUrl,
      clock: () => new Date(t0.getTime() + 724_000),
    });
    await later.app.dispatcher!.settle();
    const calls = new Map(
      (
        await prismaOf(later.app).call.findMany({
          where: { accountId: tenant.accountId },
          include: { deliveries: true },
        })
      ).map((c) => [c.id, c]),
    );
    expect(calls.get(talking)).toMatchObject({
      status: 'completed',
      answeredAt: new Date(t0.getTime() + RING_MS),
      endedAt: new Date(t0.getTime() + RING_MS + TALK_MS),
      durationSeconds: TALK_MS / 1000,
    });
    expect(calls.get(ringing)).toMatchObject({
      status: 'completed',
      answeredAt: new Date(t1.getTime() + RING_MS),
      endedAt: new Date(t1.getTime() + RING_MS + TALK_MS),
      durationSeconds: TALK_MS / 1000,
    });
    expect(calls.get(busy)).toMatchObject({
      status: 'failed',
      failureReason: 'busy',
      answeredAt: null,
      endedAt: new Date(t1.getTime() + RING_MS),
      durationSeconds: null,
    });
    // The webhooks say the same.
    const completed = json<WebhookEvent>(
      calls.get(ringing)!.deliveries.find((d) => d.eventType === 'call.completed')!.payload,
    );
    expect(completed).toMatchObject({
      timestamp: new Date(t1.getTime() + RING_MS + TALK_MS).toISOString(),
      data: { ended_at: new Date(t1.getTime() + RING_MS + TALK_MS).toISOString(), duration_seconds: TALK_MS / 1000 },
    });
  });
});

describe("the terminal event's wait for the runtime's result across a crash", () => {
  it('SIGKILL while an ended call waits for its result and while a result waits for its hang-up: each call still has one terminal event, with its result', async () => {
    const { url } = await freshDatabase();
    const prisma = createPrisma(url, { max: 2 });
    const tenant = await createTenant(prisma);
    const receiver = await startReceiver();
    await setWebhook(storageOf(prisma), tenant.accountId, receiver.url, { allowPrivate: true, now: new Date() });
    // The service's signing key, made here as the first process would: the test signs the runtime's tokens with it.
    const key = randomBytes(32);
    await prisma.signingKey.create({ data: { purpose: CONTEXT_TOKEN_KEY_PURPOSE, key: key.toString('base64') } });
    const standIn = new TwilioStandIn();
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-crash-result-'));
    const env = {
      ...serverEnv(url, dataDir).env,
      ...twilioEnv(await standIn.start()),
      AGENT_RESULT_WAIT_SECONDS: '60',
    };

    let server = await startServer(env);
    const post = (pathname: string, headers: Record<string, string>, body: string) =>
      httpsRequest(server.port, pathname, { method: 'POST', headers, body });
    const callback = (callId: string, form: Record<string, string>) => {
      const pathname = `/telephony/twilio/status?call_id=${callId}`;
      return post(
        pathname,
        {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': signLikeTwilio(TOKEN, `${PUBLIC}${pathname}`, form),
        },
        new URLSearchParams(form).toString(),
      );
    };
    const answered = async (phone: string) => {
      const res = await post(
        '/api/v1/calls/trigger',
        { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        JSON.stringify({ phone_number: phone }),
      );
      const callId = json<TriggerResponse>(res.body).call_id;
      const sid = (await waitFor(() => standIn.creates.find((c) => c.form.get('Url')!.endsWith(callId)), Boolean))!.sid;
      const form = { AccountSid: ACCOUNT_SID, CallSid: sid, From: AGENT_PHONE, To: phone };
      expect((await callback(callId, { ...form, CallStatus: 'in-progress' })).status).toBe(204);
      const hangUp = async () =>
        expect((await callback(callId, { ...form, CallStatus: 'completed', CallDuration: '30' })).status).toBe(204);
      const result = async (outcome: string) => {
        const token = signContextToken(key, { callId, attempt: 1, now: new Date() });
        const res = await post(
          `/agent-runtime/v1/calls/${callId}/result`,
          { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          JSON.stringify({ outcome }),
        );
        expect(res.status).toBe(200);
      };
      return { callId, hangUp, result };
    };

    // Hung up, waiting for its result; and a result in, waiting for its hang-up.
    const ended = await answered('+14155553101');
    await ended.hangUp();
    const talking = await answered('+14155553102');
    await talking.result('appointment_booked');
    expect(await server.stop('SIGKILL')).toBe('SIGKILL');

    server = await startServer(env);
    await ended.result('callback_requested');
    await talking.hangUp();
    const terminal = (callId: string) =>
      receiver.received
        .map((r) => json<WebhookEvent>(r.body))
        .filter((e) => e.data.call_id === callId && e.type !== 'call.started');
    // Both go at once (well before the 60 s wait): the result is what each was waiting for.
    await waitFor(
      () => [terminal(ended.callId), terminal(talking.callId)],
      ([a, b]) => a!.length > 0 && b!.length > 0,
      20_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(terminal(ended.callId).map((e) => [e.type, e.data.result?.outcome])).toEqual([
      ['call.completed', 'callback_requested'],
    ]);
    expect(terminal(talking.callId).map((e) => [e.type, e.data.result?.outcome])).toEqual([
      ['call.completed', 'appointment_booked'],
    ]);
    await standIn.stop();
    await prisma.$disconnect();
  }, 120_000);
});
