// Webhook receivers that fail (refused, slow, 410, redirects, private addresses), many events and endpoints at once, the whole retry schedule on an injected clock: nothing lost, nothing sent twice.
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import dns from 'node:dns/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { enableWebhook, replayDelivery, setWebhook } from '../../src/admin/webhooks.js';
import { AdminError } from '../../src/admin/errors.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/webhooks/retry-schedule.js';
import { isPrivateAddress, webhookUrlProblem } from '../../src/webhooks/url-policy.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { freePort } from '../../src/storage/free-port.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceEndpoint } from '../helpers/seed.js';

const TIMEOUT_MS = 300;
/** A slow receiver answers this late: an attempt that ends before it did not wait for the answer, however busy the machine. */
const LATE_ANSWER_MS = TIMEOUT_MS * 10;
/** The whole schedule at its shortest (every delay jittered by -10%): no delivery may be given up before this. */
const MIN_SCHEDULE_MS = RETRY_DELAYS_MS.reduce((sum, d) => sum + d * 0.9, 0);

/** A small seeded PRNG (mulberry32): real jitter, the same on every run. */
function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Setup {
  app: App;
  clock: { now: Date };
}

async function setup(options: { allowPrivate?: boolean; perEndpoint?: number } = {}): Promise<Setup> {
  const clock = { now: new Date('2054-12-01T10:00:00Z') };
  const { app } = await buildTestApp({
    clock: () => clock.now,
    env: { WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: String(options.allowPrivate ?? true) },
    // No polling: only notifications and settle() drive the worker, so the injected clock decides what is due.
    jobs: {
      webhooks: {
        pollMs: 3_600_000,
        random: seeded(42),
        timeoutMs: TIMEOUT_MS,
        ...(options.perEndpoint ? { perEndpoint: options.perEndpoint } : {}),
      },
    },
  });
  return { app, clock };
}

type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };

/**
 * A receiver on a fixed port that can be closed (connection refused) and opened again. `respond` gets the
 * webhook-id and how many times that id came before.
 */
interface SwitchableReceiver {
  url: string;
  /** Every request, in arrival order. */
  received: { id: string; type: string; answered: number | null }[];
  connections: number;
  respond: (id: string, seenBefore: number) => Answer;
  open(): Promise<void>;
  close(): Promise<void>;
}

const receivers: SwitchableReceiver[] = [];

async function switchableReceiver(open = true): Promise<SwitchableReceiver> {
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let listening = false;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const seenBefore = receiver.received.filter((r) => r.id === id).length;
      const entry = { id, type: (JSON.parse(body) as { type: string }).type, answered: null as number | null };
      receiver.received.push(entry);
      const answer = receiver.respond(id, seenBefore);
      const send = () => {
        if (res.destroyed) return; // the sender gave up (timeout): this answer reaches nobody
        entry.answered = answer.status;
        res.writeHead(answer.status, answer.headers ?? {});
        res.end();
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
      else send();
    });
  });
  server.on('connection', (socket) => {
    receiver.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const receiver: SwitchableReceiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    received: [],
    connections: 0,
    respond: () => ({ status: 200 }),
    async open() {
      if (listening) return;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      listening = true;
    },
    async close() {
      if (!listening) return;
      listening = false;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  receivers.push(receiver);
  if (open) await receiver.open();
  return receiver;
}

afterAll(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

/** A tenant whose webhook points at `url`. */
async function endpointFor(s: Setup, url: string, allowPrivate = true): Promise<Tenant> {
  const tenant = await createTenant(s.app.storage);
  await setWebhook(s.app.storage, tenant.accountId, url, { allowPrivate, now: s.app.now() });
  return tenant;
}

/** `calls` calls that are dialled and then complete: two events each (call.started, call.completed). */
async function callsFor(s: Setup, tenant: Tenant, calls: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < calls; i++) {
    const res = await trigger(s.app, tenant.key, { phone_number: '+14155552671', metadata: { i } });
    expect(res.statusCode, res.body).toBe(200);
    const callId = callIdOf(res);
    await applyCallUpdate(s.app.storage, callId, { kind: 'dialing' }, { now: s.clock.now, source: 'dispatcher' });
    await applyCallUpdate(s.app.storage, callId, { kind: 'completed' }, { now: s.clock.now, source: 'provider' });
    ids.push(callId);
  }
  return ids;
}

const pendingDue = (s: Setup) =>
  prismaOf(s.app).webhookDelivery.count({ where: { status: 'pending', nextAttemptAt: { lte: s.clock.now } } });

/**
 * Runs the worker until nothing is due at the current clock. A pending delivery in flight is still due (its
 * next_attempt_at moves only when its attempt is recorded), so zero due also means nothing in flight.
 */
async function drain(s: Setup) {
  for (let pass = 0; pass < 200; pass++) {
    await s.app.deliveryWorker!.settle();
    if ((await pendingDue(s)) === 0) return;
  }
  throw new Error('deliveries still due after 200 passes');
}

const attemptsMade = async (s: Setup) =>
  (await prismaOf(s.app).webhookDelivery.aggregate({ _sum: { attemptCount: true } }))._sum.attemptCount ?? 0;

/**
 * One retry wave: every pending delivery's next attempt must sit on the schedule (±10% of the delay for the attempts
 * made so far); a millisecond before the earliest is due nothing is sent; at the latest, every pending delivery is
 * sent exactly once more. Returns false when nothing is pending.
 */
async function retryWave(s: Setup): Promise<boolean> {
  const pending = await prismaOf(s.app).webhookDelivery.findMany({ where: { status: 'pending' } });
  if (pending.length === 0) return false;
  for (const d of pending) {
    const base = RETRY_DELAYS_MS[d.attemptCount - 1]!;
    const gap = d.nextAttemptAt.getTime() - d.lastAttemptAt!.getTime();
    expect(gap, `delivery ${d.id} after attempt ${d.attemptCount}`).toBeGreaterThanOrEqual(Math.floor(base * 0.9));
    expect(gap, `delivery ${d.id} after attempt ${d.attemptCount}`).toBeLessThanOrEqual(Math.ceil(base * 1.1));
  }
  const due = pending.map((d) => d.nextAttemptAt.getTime());
  const before = await attemptsMade(s);
  s.clock.now = new Date(Math.min(...due) - 1);
  await drain(s);
  expect(await attemptsMade(s), 'an attempt before it was due').toBe(before);
  s.clock.now = new Date(Math.max(...due));
  await drain(s);
  const after = await prismaOf(s.app).webhookDelivery.findMany({ where: { id: { in: pending.map((d) => d.id) } } });
  for (const d of after)
    expect(d.attemptCount, `delivery ${d.id}`).toBe(pending.find((p) => p.id === d.id)!.attemptCount + 1);
  return true;
}

const deliveriesOf = (s: Setup, tenant: Tenant) =>
  prismaOf(s.app).webhookDelivery.findMany({
    where: { endpoint: { accountId: tenant.accountId } },
    include: { attempts: { orderBy: { attemptNumber: 'asc' } } },
  });

/** Received count per webhook-id. */
const countsById = (receiver: SwitchableReceiver) =>
  receiver.received.reduce((m, r) => m.set(r.id, (m.get(r.id) ?? 0) + 1), new Map<string, number>());

describe('receivers that are down or slow, many events, several endpoints at once', () => {
  it('down for 5 attempts then up, slow for 3 then fast, always down, always slow, healthy: each event arrives once or fails after the full schedule', async ({
    annotate,
  }) => {
    const s = await setup({ perEndpoint: 25 });
    const downThenUp = await switchableReceiver(false);
    const slowThenFast = await switchableReceiver();
    slowThenFast.respond = (_id, seenBefore) =>
      seenBefore < 3 ? { status: 200, delayMs: LATE_ANSWER_MS } : { status: 200 };
    const alwaysDown = await switchableReceiver(false);
    const alwaysSlow = await switchableReceiver();
    alwaysSlow.respond = () => ({ status: 200, delayMs: TIMEOUT_MS * 2 });
    const healthy = await switchableReceiver();

    const CALLS = 10;
    const groups = [
      { name: 'down for 5 attempts, then up', receiver: downThenUp },
      { name: 'slow for 3 attempts, then fast', receiver: slowThenFast },
      { name: 'always refused', receiver: alwaysDown },
      { name: 'always slower than the timeout', receiver: alwaysSlow },
      { name: 'healthy', receiver: healthy },
    ];
    const tenants: Tenant[] = [];
    for (const group of groups) tenants.push(await endpointFor(s, group.receiver.url));
    for (const tenant of tenants) await callsFor(s, tenant, CALLS);
    await drain(s);
    const createdAt = s.clock.now.getTime();

    // The healthy endpoint got everything at once, although four others were failing beside it.
    expect(countsById(healthy).size).toBe(CALLS * 2);
    for (const d of await deliveriesOf(s, tenants[4]!))
      expect(d).toMatchObject({ status: 'succeeded', attemptCount: 1 });

    let waves = 0;
    for (;;) {
      // Opened after its fifth failed attempt: the sixth finds it up.
      if (waves === 4) await downThenUp.open();
      if (!(await retryWave(s))) break;
      waves++;
      // Nobody gives up early: after 9 attempts, the failing ones are still pending.
      if (waves === MAX_ATTEMPTS - 2) {
        for (const tenant of [tenants[2]!, tenants[3]!])
          for (const d of await deliveriesOf(s, tenant))
            expect(d).toMatchObject({ status: 'pending', attemptCount: MAX_ATTEMPTS - 1 });
      }
    }
    expect(waves).toBe(MAX_ATTEMPTS - 1);

    const [downD, slowD, refusedD, slowForeverD] = await Promise.all(
      tenants.slice(0, 4).map((t) => deliveriesOf(s, t)),
    );
    // Down, then up: 5 refusals recorded, the 6th attempt delivered; each webhook-id arrived exactly once.
    for (const d of downD!) {
      expect(d).toMatchObject({ status: 'succeeded', attemptCount: 6 });
      expect(d.attempts.slice(0, 5).every((a) => a.responseStatus === null && /ECONNREFUSED/.test(a.error ?? ''))).toBe(
        true,
      );
      expect(d.attempts[5]).toMatchObject({ responseStatus: 200, error: null });
    }
    expect([...countsById(downThenUp).values()]).toEqual(Array(CALLS * 2).fill(1));
    expect(new Set(countsById(downThenUp).keys())).toEqual(new Set(downD!.map((d) => d.id)));

    // Slow, then fast: three attempts abandoned at the timeout (not waiting for the late answer), the fourth accepted.
    // The receiver saw each id four times (at least once), and answered 2xx in time to exactly one of them.
    for (const d of slowD!) {
      expect(d).toMatchObject({ status: 'succeeded', attemptCount: 4 });
      for (const a of d.attempts.slice(0, 3)) {
        expect(a.error).toMatch(new RegExp(`timed out after ${TIMEOUT_MS} ms`));
        expect(a.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 10);
        expect(a.durationMs).toBeLessThan(LATE_ANSWER_MS);
      }
    }
    expect([...countsById(slowThenFast).values()]).toEqual(Array(CALLS * 2).fill(4));

    // Always failing: failed after exactly MAX_ATTEMPTS attempts, and not before the whole schedule had run.
    for (const d of [...refusedD!, ...slowForeverD!]) {
      expect(d).toMatchObject({ status: 'failed', attemptCount: MAX_ATTEMPTS });
      expect(d.attempts).toHaveLength(MAX_ATTEMPTS);
      expect(d.completedAt!.getTime() - createdAt).toBeGreaterThanOrEqual(MIN_SCHEDULE_MS);
    }
    expect(alwaysDown.connections).toBe(0);
    expect([...countsById(alwaysSlow).values()]).toEqual(Array(CALLS * 2).fill(MAX_ATTEMPTS));

    // Still nothing due, however far the clock goes: failed is final (until a replay).
    s.clock.now = new Date(s.clock.now.getTime() + 7 * 24 * 3600_000);
    await drain(s);
    expect(await attemptsMade(s)).toBe(CALLS * 2 * (6 + 4 + MAX_ATTEMPTS + MAX_ATTEMPTS + 1));
    const shown = `${groups.length} endpoints x ${CALLS * 2} events; ${waves} retry waves over ${((s.clock.now.getTime() - createdAt) / 3600_000 - 7 * 24).toFixed(1)} h of injected clock; ${await attemptsMade(s)} attempts`;
    await annotate(shown);
    console.info(`[reliability] webhooks down/slow: ${shown}`);
  });
});

describe('410 Gone from a receiver that was down', () => {
  it('disables the endpoint: queued deliveries and new events are held, unsent; enabled again, the same ids arrive once each', async () => {
    const s = await setup({ perEndpoint: 1 });
    const gone = await switchableReceiver(false);
    const neighbour = await switchableReceiver();
    const tenant = await endpointFor(s, gone.url);
    const other = await endpointFor(s, neighbour.url);
    await callsFor(s, tenant, 3);
    await callsFor(s, other, 3);
    await drain(s);
    // Six deliveries refused once each; the neighbour got its six at once.
    expect((await deliveriesOf(s, tenant)).map((d) => d.attemptCount)).toEqual(Array(6).fill(1));
    expect(countsById(neighbour).size).toBe(6);

    // Back up, answering 410: one at a time per endpoint, so the first answer disables it before the rest are sent.
    gone.respond = () => ({ status: 410 });
    await gone.open();
    const due = await prismaOf(s.app).webhookDelivery.findMany({ where: { status: 'pending' } });
    s.clock.now = new Date(Math.max(...due.map((d) => d.nextAttemptAt.getTime())));
    await drain(s);
    const afterGone = await deliveriesOf(s, tenant);
    expect(gone.received).toHaveLength(1);
    // None reached the receiver: all held (the one answered 410 too), none failed.
    expect(afterGone.every((d) => d.status === 'held')).toBe(true);
    expect(afterGone.filter((d) => d.attempts.length === 2).map((d) => d.attempts[1]!.responseStatus)).toEqual([410]);
    expect(afterGone.filter((d) => d.attempts.length === 1)).toHaveLength(5);
    const endpoint = await prismaOf(s.app).webhookEndpoint.findUniqueOrThrow({
      where: { accountId: tenant.accountId },
    });
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabledReason).toMatch(/410/);

    // New events of the disabled endpoint are held, not sent; the neighbour's still arrive.
    await callsFor(s, tenant, 1);
    await callsFor(s, other, 1);
    await drain(s);
    s.clock.now = new Date(s.clock.now.getTime() + MIN_SCHEDULE_MS);
    await drain(s);
    const held = await deliveriesOf(s, tenant);
    expect(held).toHaveLength(8);
    expect(held.every((d) => d.status === 'held')).toBe(true);
    expect(gone.received).toHaveLength(1);
    expect(countsById(neighbour).size).toBe(8);
    await expect(replayDelivery(s.app.storage, afterGone[0]!.id, undefined, { now: s.app.now() })).rejects.toThrow(
      AdminError,
    );

    // The receiver is fixed and the endpoint enabled again: every held delivery arrives, once, with its id; new
    // events flow.
    gone.respond = () => ({ status: 204 });
    expect(await enableWebhook(s.app.storage, tenant.accountId, undefined, s.app.now())).toMatchObject({ released: 8 });
    await callsFor(s, tenant, 1);
    await drain(s);
    const final = await deliveriesOf(s, tenant);
    expect(final).toHaveLength(10);
    expect(final.every((d) => d.status === 'succeeded')).toBe(true);
    const counts = countsById(gone);
    for (const d of afterGone)
      expect(counts.get(d.id), d.id).toBe(d.attempts.some((a) => a.responseStatus === 410) ? 2 : 1);
    expect(counts.size).toBe(10);
    expect([...countsById(neighbour).values()].every((n) => n === 1)).toBe(true);
  });
});

describe('redirects are failures, never followed', () => {
  it('301, 302, 303, 307 and 308 endpoints: retried on the schedule, failed after the last attempt, the target never contacted', async () => {
    const s = await setup();
    const target = await switchableReceiver();
    const codes = [301, 302, 303, 307, 308];
    const endpoints: { code: number; tenant: Tenant; receiver: SwitchableReceiver }[] = [];
    for (const code of codes) {
      const receiver = await switchableReceiver();
      receiver.respond = () => ({ status: code, headers: { location: target.url } });
      endpoints.push({ code, tenant: await endpointFor(s, receiver.url), receiver });
    }
    for (const e of endpoints) await callsFor(s, e.tenant, 2);
    await drain(s);
    while (await retryWave(s));
    for (const e of endpoints) {
      for (const d of await deliveriesOf(s, e.tenant)) {
        expect(d).toMatchObject({ status: 'failed', attemptCount: MAX_ATTEMPTS });
        expect(d.attempts.map((a) => a.responseStatus)).toEqual(Array(MAX_ATTEMPTS).fill(e.code));
      }
      expect(e.receiver.received).toHaveLength(4 * MAX_ATTEMPTS);
    }
    expect(target.connections).toBe(0);
  });
});

/** A name (not an IP literal, not a local-looking name) that this machine resolves to a private address, if any. */
async function privateName(): Promise<string | null> {
  for (const name of [os.hostname(), 'localhost.localdomain', 'ip6-localhost']) {
    if (webhookUrlProblem(`https://${name}/hooks`, false) !== null) continue;
    const addresses = await dns.lookup(name, { all: true }).catch(() => []);
    if (addresses.length > 0 && addresses.every((a) => isPrivateAddress(a.address))) return name;
  }
  return null;
}

describe('private addresses (WEBHOOK_ALLOW_PRIVATE_TARGETS=false)', () => {
  it('refuses every disguise of a private address when the webhook is set, and changes nothing', async () => {
    const s = await setup({ allowPrivate: false });
    const tenant = await createTenant(s.app.storage);
    const disguised = [
      'https://[::ffff:127.0.0.1]/x',
      'https://[::ffff:7f00:1]/x',
      'https://[::ffff:169.254.169.254]/latest',
      'https://0.0.0.0/x',
      'https://2130706433/x',
      'https://0x7f000001/x',
      'https://0177.0.0.1/x',
      'https://127.1/x',
      'https://[fd12:3456::1]/x',
      'https://[fe80::1]/x',
      'https://192.168.0.10/x',
      'https://172.31.255.255/x',
      'https://100.127.255.254/x',
      'https://224.0.0.1/x',
      'https://metadata.google.internal/x',
      'https://db.internal/x',
      'https://printer.local/x',
      'https://api.localhost/x',
      'http://hooks.example.com/x',
      'https://127.0.0.1.:8443/x',
      // Fully qualified spellings (a trailing dot) name the same hosts.
      'https://LOCALHOST./x',
      'https://api.localhost./x',
      'https://metadata.google.internal./x',
    ];
    const accepted: string[] = [];
    for (const url of disguised) {
      const error = await setWebhook(s.app.storage, tenant.accountId, url, {
        allowPrivate: false,
        now: s.app.now(),
      }).then(
        () => null,
        (e: unknown) => e,
      );
      if (!(error instanceof AdminError)) accepted.push(url);
    }
    expect(accepted, 'private targets accepted at set time').toEqual([]);
    expect(await prismaOf(s.app).webhookEndpoint.count({ where: { accountId: tenant.accountId } })).toBe(0);
  });

  it('a name that resolves to 127.0.0.1 is accepted when set but refused at connect time, on every attempt, until failed', async ({
    annotate,
  }) => {
    const s = await setup({ allowPrivate: false });
    // A plain TCP listener: any connection at all (before TLS) would count.
    let connections = 0;
    const listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as net.AddressInfo).port;
    try {
      const name = await privateName();
      const byName = await createTenant(s.app.storage);
      if (name) {
        await annotate(`"${name}" resolves to a private address here`);
        await setWebhook(s.app.storage, byName.accountId, `https://${name}:${port}/hooks`, {
          allowPrivate: false,
          now: s.app.now(),
        });
      } else {
        // No such name on this machine: as if a public name had been set, then re-pointed at 127.0.0.1 (DNS rebinding).
        await setWebhook(s.app.storage, byName.accountId, 'https://hooks.example.com/hooks', {
          allowPrivate: false,
          now: s.app.now(),
        });
        await forceEndpoint(
          prismaOf(s.app),
          { accountId: byName.accountId },
          { url: `https://localhost:${port}/hooks` },
        );
      }
      await callsFor(s, byName, 3);
      await drain(s);
      while (await retryWave(s));
      const deliveries = await deliveriesOf(s, byName);
      expect(deliveries).toHaveLength(6);
      for (const d of deliveries) {
        expect(d).toMatchObject({ status: 'failed', attemptCount: MAX_ATTEMPTS });
        for (const a of d.attempts) expect(a.error).toMatch(/not allowed/i);
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});
