// Lease recovery of a retried call's later attempt: a dispatcher that dies between claiming attempt 2 and dialling it
// leaves it to another, which dials it once; one that died after recording its intent to dial attempt 2 leaves an
// unknown outcome, which fails the attempt rather than ring twice.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { SIMULATED_BUSY_THEN_ANSWERS, SimulatedDialer } from '../../src/dispatch/simulated-dialer.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { freshDatabase } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';
import { forceAgent, forceCall } from '../helpers/seed.js';

const FAST = { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '120' };
const RETRY_AT_ONCE = { maxAttempts: 2, retryOn: ['busy'], retryWaitsMinutes: [0] };

function dialLog(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-retry-dials-')), 'dials.log');
}
const linesOf = (log: string) => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

describe('recovery of a later attempt', () => {
  it('a worker that dies between claiming attempt 2 and dialling it: another dials attempt 2 exactly once', async () => {
    const { url } = await freshDatabase();
    let release: () => void = () => {};
    const dead = new Promise<void>((resolve) => {
      release = resolve;
    });
    const claimedSecond: string[] = [];
    const logs = [dialLog(), dialLog()] as const;
    const a = (
      await buildTestApp({
        databaseUrl: url,
        env: { ...FAST, SIMULATED_DIAL_LOG: logs[0] },
        jobs: {
          dispatcher: {
            leaseMs: 400,
            beforeDial: async (call) => {
              if (call.attempt < 2) return;
              claimedSecond.push(call.id);
              await dead;
              throw new Error('worker died');
            },
          },
        },
      })
    ).app;
    const tenant = await createTenant(a.storage);
    await forceAgent(prismaOf(a), tenant.agentId, RETRY_AT_ONCE);
    const callId = callIdOf(await trigger(a, tenant.key, { phone_number: SIMULATED_BUSY_THEN_ANSWERS }));
    await waitFor(
      async () => claimedSecond.length,
      (n) => n === 1,
    );
    const stopped = a.dispatcher!.stop();

    const b = (
      await buildTestApp({
        databaseUrl: url,
        env: { ...FAST, SIMULATED_DIAL_LOG: logs[1] },
        jobs: { dispatcher: { leaseMs: 400 } },
      })
    ).app;
    const call = await waitFor(
      () => prismaOf(b).call.findUniqueOrThrow({ where: { id: callId } }),
      (c) => c.status === 'completed',
    );
    release();
    await stopped;
    expect(linesOf(logs[0])).toEqual([callId]);
    expect(linesOf(logs[1])).toEqual([`${callId}/2`]);
    expect(call).toMatchObject({ attempt: 2, dialAttempts: 2 });
    expect((call.attemptOutcomes as { outcome: string }[]).map((o) => o.outcome)).toEqual(['busy', 'completed']);
  });

  it('attempt 2 claimed by a dead worker: dialled once if its intent was not recorded, failed (not dialled) if it was', async () => {
    const { app } = await buildTestApp({ env: { ...FAST, DISPATCH_ENABLED: 'false' } });
    const tenant = await createTenant(app.storage);
    await forceAgent(prismaOf(app), tenant.agentId, RETRY_AT_ONCE);
    const outcomes = [{ attempt: 1, outcome: 'busy', at: new Date(Date.now() - 60_000).toISOString() }];
    /** A call on its second attempt, claimed by a worker whose lease ran out 31 s ago (past its retries too). */
    const claimedByTheDead = async (dialAttempts: number) => {
      const callId = callIdOf(await trigger(app, tenant.key, { phone_number: SIMULATED_BUSY_THEN_ANSWERS }));
      await forceCall(prismaOf(app), callId, {
        status: 'dialing',
        attempt: 2,
        attemptOutcomes: outcomes,
        startedAt: new Date(),
        dialAttempts,
        leaseOwner: 'dead',
        leaseExpiresAt: new Date(Date.now() - 31_000),
      });
      return callId;
    };
    const notDialled = await claimedByTheDead(1);
    const intended = await claimedByTheDead(2);
    const log = dialLog();
    const dispatcher = new Dispatcher({
      storage: app.storage,
      databaseUrl: '',
      dialer: new SimulatedDialer(log),
      now: () => new Date(),
      log: app.log,
      maxConcurrentCalls: 10,
    });
    await dispatcher.tick();
    await dispatcher.stop();
    expect(linesOf(log)).toEqual([`${notDialled}/2`]);
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: notDialled } })).toMatchObject({
      status: 'dialing',
      attempt: 2,
      dialAttempts: 2,
      providerCallId: `sim_${notDialled}`,
    });
    const failed = await prismaOf(app).call.findUniqueOrThrow({ where: { id: intended } });
    expect(failed).toMatchObject({ status: 'failed', failureReason: 'provider_error', attempt: 2, dialAttempts: 2 });
    expect((failed.attemptOutcomes as { outcome: string }[]).map((o) => o.outcome)).toEqual(['busy', 'provider_error']);
  });
});
