// Crash safety at scale: 2,000 triggers over 20 accounts with the server SIGKILLed twice mid-run; every 200 is kept, ends once, is dialled at most once and notified once.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { createPrisma } from '../../src/storage/database.js';
import { freshDatabase, storageOf } from '../helpers/database.js';
import { json, type TriggerResponse } from '../helpers/json.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { keepAliveAgent, sleep, triggerOver, waitUntil } from './process-helpers.js';

const ACCOUNTS = 20;
const TARGET = 2_000;
const IN_FLIGHT = 32;
/** Accepted counts at which the server is killed: once early in the flood, once late (calls in every state both times). */
const KILL_AT = [600, 1_400];
// Mostly answered calls, plus the simulated dialer's failing numbers so that both terminal events are exercised.
const NUMBERS = [
  '+14155552671',
  '+14155552671',
  '+14155552671',
  '+14155552671',
  '+14155552671',
  '+14155552671',
  '+14155552671',
  '+15005550001',
  '+15005550002',
  '+15005550003',
];

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface WebhookBody {
  type: string;
  data: { call_id: string; status: string; failure_reason: string | null; metadata: Record<string, unknown> };
}

describe('SIGKILL twice during 2,000 triggers', () => {
  it('every accepted call exists, ends in exactly one terminal status, is dialled at most once and produces one terminal webhook', async ({
    annotate,
  }) => {
    const { url } = await freshDatabase();
    const prisma = createPrisma(url, { max: 4 });
    cleanups.push(() => prisma.$disconnect());
    const receiver = await startReceiver();
    const tenants: Tenant[] = [];
    const secrets = new Map<string, string>();
    for (let i = 0; i < ACCOUNTS; i++) {
      const tenant = await createTenant(prisma);
      tenants.push(tenant);
      secrets.set(
        tenant.accountId,
        (await setWebhook(storageOf(prisma), tenant.accountId, receiver.url, { allowPrivate: true, now: new Date() }))
          .secret,
      );
    }
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-rel-crash-'));
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const dialLog = path.join(dataDir, 'dials.log');
    // The same DATABASE_URL and DATA_DIR on every start (the certificate and the dial log survive the kills).
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: url,
      SIMULATED_DIAL_LOG: dialLog,
      SIMULATED_RING_MS: '50',
      SIMULATED_TALK_MS: '200',
      DISPATCH_LEASE_MS: '2000',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_QUEUED_CALLS: String(TARGET),
    };

    let server: ServerProcess = await startServer(env);
    // Every process's warnings and errors are the first thing to read when the run fails.
    const servers = [server];
    onTestFailed(() => {
      for (const [i, s] of servers.entries()) {
        const notable = s
          .output()
          .split('\n')
          .filter((line) => line && !line.startsWith('{"level":30'))
          .slice(-15)
          .map((l) => l.slice(0, 1200));
        console.error(
          `process ${i + 1} (${s.child.signalCode ?? s.child.exitCode ?? 'running'}), warnings and errors (last 15):\n${notable.join('\n')}`,
        );
      }
    });
    cleanups.push(() =>
      server.child.exitCode === null && server.child.signalCode === null ? server.stop('SIGKILL') : Promise.resolve(),
    );
    let agent = keepAliveAgent(IN_FLIGHT);
    cleanups.push(async () => agent.destroy());

    // The client: IN_FLIGHT requests at a time until TARGET got a 200. A request that dies with the process got no
    // answer and is not retried (nothing was promised for it; a call it may have created is checked like the rest).
    const accepted = new Map<string, number>(); // call_id -> request number
    const statuses = new Map<number, number>();
    const refusals = new Set<string>();
    let networkErrors = 0;
    let inFlight = 0;
    let sent = 0;
    let restarting: Promise<void> | undefined;
    const kills: { acceptedBefore: number; statuses: Record<string, number>; restartMs: number }[] = [];

    const killAndRestart = async () => {
      const acceptedBefore = accepted.size;
      expect(await server.stop('SIGKILL')).toBe('SIGKILL');
      const midway = await prisma.call.groupBy({
        by: ['status'],
        _count: true,
        where: { accountId: { in: tenants.map((t) => t.accountId) } },
      });
      agent.destroy();
      agent = keepAliveAgent(IN_FLIGHT);
      const started = Date.now();
      server = await startServer(env);
      servers.push(server);
      kills.push({
        acceptedBefore,
        statuses: Object.fromEntries(midway.map((g) => [g.status, g._count])),
        restartMs: Date.now() - started,
      });
    };

    const worker = async () => {
      while (accepted.size < TARGET) {
        if (restarting) await restarting;
        if (accepted.size + inFlight >= TARGET) {
          await sleep(10);
          continue;
        }
        const n = sent++;
        const tenant = tenants[n % ACCOUNTS]!;
        inFlight++;
        try {
          const res = await triggerOver(agent, server.port, tenant.key, {
            phone_number: NUMBERS[Math.floor(n / ACCOUNTS) % NUMBERS.length]!,
            metadata: { n },
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 200) accepted.set(json<TriggerResponse>(res.body).call_id, n);
          else refusals.add(res.body);
        } catch {
          networkErrors++;
          await sleep(50); // the process is gone: wait for the restart
        } finally {
          inFlight--;
        }
        if (kills.length < KILL_AT.length && !restarting && accepted.size >= KILL_AT[kills.length]!) {
          restarting = killAndRestart().finally(() => {
            restarting = undefined;
          });
        }
      }
    };
    const floodStarted = Date.now();
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    if (restarting) await restarting;
    const floodMs = Date.now() - floodStarted;

    // Then the service works through the backlog: every call ends and its terminal event reaches the receiver, and no
    // delivery is left pending. A webhook that a killed process sent without recording it has arrived already, but its
    // delivery is sent again (and recorded) only once that process's lease on it runs out (2 x WEBHOOK_TIMEOUT_MS + 5 s),
    // which can be after a fast drain.
    const terminalReceived = () =>
      new Set(
        receiver.received
          .map((r) => JSON.parse(r.body) as WebhookBody)
          .filter((e) => e.type !== 'call.started')
          .map((e) => e.data.call_id),
      );
    const accounts = tenants.map((t) => t.accountId);
    await waitUntil(
      'every call ended, its terminal webhook arrived and no delivery is pending',
      async () => {
        const open = await prisma.call.count({
          where: { accountId: { in: accounts }, status: { notIn: ['completed', 'failed'] } },
        });
        if (open > 0) return false;
        const total = await prisma.call.count({ where: { accountId: { in: accounts } } });
        if (terminalReceived().size < total) return false;
        return (
          (await prisma.webhookDelivery.count({
            where: { status: 'pending', call: { accountId: { in: accounts } } },
          })) === 0
        );
      },
      240_000,
      250,
    );
    const drainMs = Date.now() - floodStarted - floodMs;
    // A retry of a delivery whose success was not recorded before a kill may still be on its way: let it land.
    await sleep(1_500);
    expect(await server.stop('SIGTERM')).toBe(0);

    const calls = await prisma.call.findMany({ where: { accountId: { in: accounts } }, include: { events: true } });
    const deliveries = await prisma.webhookDelivery.findMany({ where: { callId: { in: calls.map((c) => c.id) } } });
    const dials = (await fs.readFile(dialLog, 'utf8')).trim().split('\n').filter(Boolean);
    const dialCount = new Map<string, number>();
    for (const id of dials) dialCount.set(id, (dialCount.get(id) ?? 0) + 1);

    // Every 200 is kept; calls created by requests that died with the process (no 200) are held to the same rules.
    const byId = new Map(calls.map((c) => [c.id, c]));
    const missing = [...accepted.keys()].filter((id) => !byId.has(id));
    const unacknowledged = calls.filter((c) => !accepted.has(c.id));

    // Exactly one terminal status (and one terminal call event) per call.
    const notTerminal = calls.filter((c) => c.status !== 'completed' && c.status !== 'failed');
    const terminalEventCounts = calls.filter(
      (c) => c.events.filter((e) => e.toStatus === 'completed' || e.toStatus === 'failed').length !== 1,
    );

    // Dialled at most once; a completed call was dialled exactly once; nothing unknown was dialled.
    const dialledTwice = [...dialCount].filter(([, n]) => n > 1);
    const unknownDials = [...dialCount.keys()].filter((id) => !byId.has(id));
    const completedUndialled = calls.filter((c) => c.status === 'completed' && dialCount.get(c.id) !== 1);

    // Webhooks at the receiver: exactly one terminal webhook-id per call, matching the call's outcome, signed with its
    // account's secret, carrying its metadata; at most one call.started id. Redeliveries repeat an id, never add one.
    const terminalIds = new Map<string, Set<string>>();
    const startedIds = new Map<string, Set<string>>();
    let redelivered = 0;
    const seen = new Set<string>();
    const problems: string[] = [];
    for (const r of receiver.received) {
      const id = String(r.headers['webhook-id']);
      if (seen.has(id)) redelivered++;
      seen.add(id);
      const event = JSON.parse(r.body) as WebhookBody;
      const call = byId.get(event.data.call_id);
      if (!call) {
        problems.push(`webhook for unknown call ${event.data.call_id}`);
        continue;
      }
      try {
        new Webhook(secrets.get(call.accountId)!).verify(r.body, {
          'webhook-id': id,
          'webhook-timestamp': String(r.headers['webhook-timestamp']),
          'webhook-signature': String(r.headers['webhook-signature']),
        });
      } catch {
        problems.push(`bad signature on ${id}`);
      }
      const target = event.type === 'call.started' ? startedIds : terminalIds;
      target.set(call.id, (target.get(call.id) ?? new Set()).add(id));
      if (event.type !== 'call.started') {
        if (event.type !== `call.${call.status}` || event.data.failure_reason !== call.failureReason)
          problems.push(
            `call ${call.id} is ${call.status}/${call.failureReason} but its webhook says ${event.type}/${event.data.failure_reason}`,
          );
        if (accepted.has(call.id) && event.data.metadata.n !== accepted.get(call.id))
          problems.push(`call ${call.id}: metadata ${JSON.stringify(event.data.metadata)}`);
      }
    }
    const terminalNotOnce = calls.filter((c) => terminalIds.get(c.id)?.size !== 1);
    const startedTwice = [...startedIds].filter(([, ids]) => ids.size > 1);
    const terminalDeliveryRows = deliveries.filter((d) => d.eventType !== 'call.started');
    const terminalRowsNotOnce = calls.filter((c) => terminalDeliveryRows.filter((d) => d.callId === c.id).length !== 1);
    const undelivered = deliveries.filter((d) => d.status !== 'succeeded');

    // Per account, never more than MAX_CONCURRENT_CALLS (10) dialling or talking at once, across the kills: from the
    // calls' own times (a call whose dispatcher died still holds its slot until it is recovered or ends).
    const peaks = accounts.map((accountId) => {
      const edges = calls
        .filter((c) => c.accountId === accountId && c.startedAt)
        .flatMap(
          (c) =>
            [
              [c.startedAt!.getTime(), 1],
              [c.endedAt!.getTime(), -1],
            ] as const,
        )
        .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      let active = 0;
      let peak = 0;
      for (const [, delta] of edges) peak = Math.max(peak, (active += delta));
      return peak;
    });
    // provider_error beyond the +15005550003 numbers: calls whose dial was requested but not recorded when the process died.
    const crashFailures = calls.filter(
      (c) => c.failureReason === 'provider_error' && c.phoneNumber !== '+15005550003',
    ).length;

    const outcomes: Record<string, number> = {};
    for (const c of calls) {
      const key = c.status === 'failed' ? `failed:${c.failureReason}` : c.status;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    const report = {
      accepted: accepted.size,
      requestsSent: sent,
      httpStatuses: Object.fromEntries(statuses),
      networkErrors,
      callsStored: calls.length,
      unacknowledgedCalls: unacknowledged.length,
      outcomes,
      providerErrorsFromCrashes: crashFailures,
      peakActivePerAccount: Math.max(...peaks),
      dialLines: dials.length,
      distinctDialled: dialCount.size,
      terminalWebhookIds: [...terminalIds.values()].reduce((n, ids) => n + ids.size, 0),
      webhookRequests: receiver.received.length,
      redelivered,
      kills,
      floodMs,
      drainMs,
    };
    await annotate(JSON.stringify(report));
    console.info(`[reliability] crash: ${JSON.stringify(report)}`);

    expect(missing, 'accepted calls missing from the database').toEqual([]);
    expect(accepted.size).toBe(TARGET);
    // A request got its 200, lost its connection with the process, or (a runner short of CPU, the pool busy for
    // longer than its connection timeout) a 503 that changed nothing; never another answer.
    expect([...statuses.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(
      [...refusals].filter((body) => body !== '{"success":false,"error":"Service temporarily unavailable"}'),
    ).toEqual([]);
    expect(kills).toHaveLength(2);
    // Both kills hit calls in flight: waiting, being dialled or talking.
    for (const kill of kills)
      expect(
        (kill.statuses.initiated ?? 0) + (kill.statuses.dialing ?? 0) + (kill.statuses.in_progress ?? 0),
      ).toBeGreaterThan(0);
    expect(notTerminal.map((c) => `${c.id}:${c.status}`)).toEqual([]);
    expect(terminalEventCounts.map((c) => c.id)).toEqual([]);
    expect(dialledTwice).toEqual([]);
    expect(unknownDials).toEqual([]);
    expect(completedUndialled.map((c) => c.id)).toEqual([]);
    expect(problems).toEqual([]);
    expect(terminalNotOnce.map((c) => `${c.id}:${[...(terminalIds.get(c.id) ?? [])].join(',')}`)).toEqual([]);
    expect(startedTwice).toEqual([]);
    expect(terminalRowsNotOnce.map((c) => c.id)).toEqual([]);
    expect(undelivered.map((d) => `${d.id}:${d.status}`)).toEqual([]);
    expect(Math.max(...peaks)).toBeLessThanOrEqual(10);
  });
});
