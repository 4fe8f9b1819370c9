// SIMULATED_RING_MS as a range (`min-max`): each simulated call rings its own time in the range, the same in every
// process, and the dispatcher advances each call when its own ring is over (the bench's dialer stand-in, issue 25).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseSimulatedRing } from '../../src/config.js';
import { ringOf, simulatedWakeups } from '../../src/dispatch/simulated-dialer.js';
import { buildTestApp, closeTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

describe('SIMULATED_RING_MS', () => {
  it('takes milliseconds or a range, and refuses anything else by name', () => {
    expect(loadConfig({}).SIMULATED_RING_MS).toBe(1000);
    expect(loadConfig({ SIMULATED_RING_MS: '0' }).SIMULATED_RING_MS).toBe(0);
    expect(loadConfig({ SIMULATED_RING_MS: '1000-3000' }).SIMULATED_RING_MS).toEqual({ minMs: 1000, maxMs: 3000 });
    expect(parseSimulatedRing(' 200 - 200 ')).toBe(200);
    for (const bad of ['3000-1000', 'fast', '-5', '1000-', '1.5'])
      expect(() => loadConfig({ SIMULATED_RING_MS: bad }), bad).toThrow(ConfigError);
    expect(() => loadConfig({ SIMULATED_RING_MS: '3000-1000' })).toThrow(/SIMULATED_RING_MS/);
  });

  it('gives each attempt a ring in the range, the same wherever it is computed', () => {
    const ring = { minMs: 1000, maxMs: 3000 };
    const startedAt = new Date('2054-11-25T10:00:00.000Z');
    const rings = Array.from({ length: 2000 }, (_, i) =>
      ringOf(ring, { id: `0193a0b0-0000-7000-8000-${String(i).padStart(12, '0')}`, startedAt }),
    );
    expect(Math.min(...rings)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...rings)).toBeLessThanOrEqual(3000);
    // Spread over the range, not bunched: each third of it gets a fair share.
    for (const [from, to] of [
      [1000, 1667],
      [1667, 2333],
      [2333, 3001],
    ])
      expect(rings.filter((r) => r >= from! && r < to!).length).toBeGreaterThan(500);
    const call = { id: '0193a0b0-0000-7000-8000-000000000001', startedAt };
    expect(ringOf(ring, { ...call })).toBe(ringOf(ring, { ...call, startedAt: new Date(startedAt.getTime()) }));
    // A later attempt (dialled at another time) draws again.
    const attempts = new Set(
      Array.from({ length: 20 }, (_, i) => ringOf(ring, { ...call, startedAt: new Date(startedAt.getTime() + i) })),
    );
    expect(attempts.size).toBeGreaterThan(1);
    expect(ringOf(1500, call)).toBe(1500);
  });

  it('wakes the dispatcher at the end of each call ring and talk', () => {
    const startedAt = new Date();
    const calls = [
      { id: 'a', startedAt },
      { id: 'b', startedAt },
    ];
    expect(simulatedWakeups({ ringMs: 100, talkMs: 500 }, calls)).toEqual([110, 610]);
    const ring = { minMs: 1000, maxMs: 3000 };
    const wakeups = simulatedWakeups({ ringMs: ring, talkMs: 500 }, calls);
    for (const call of calls) {
      const end = ringOf(ring, call);
      expect(wakeups.some((ms) => ms >= end && ms <= end + 20)).toBe(true);
      expect(wakeups.some((ms) => ms >= end + 500 && ms <= end + 530)).toBe(true);
    }
  });

  it('answers each call when its own ring is over, through the dispatcher', async () => {
    const { app } = await buildTestApp({
      env: { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '100-900', SIMULATED_TALK_MS: '50' },
    });
    try {
      const tenant = await createTenant(app.storage);
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push(callIdOf(await trigger(app, tenant.key)));
      await waitFor(
        () => prismaOf(app).call.count({ where: { id: { in: ids }, status: 'completed' } }),
        (done) => done === ids.length,
        30_000,
      );
      const calls = await prismaOf(app).call.findMany({ where: { id: { in: ids } } });
      const range = { minMs: 100, maxMs: 900 };
      for (const call of calls) {
        // Dated at its scripted instant: the claim plus its own ring.
        expect(call.answeredAt!.getTime() - call.startedAt!.getTime()).toBe(ringOf(range, call));
        expect(call.endedAt!.getTime() - call.answeredAt!.getTime()).toBe(50);
      }
      expect(new Set(calls.map((c) => c.answeredAt!.getTime() - c.startedAt!.getTime())).size).toBeGreaterThan(1);
    } finally {
      await closeTestApp(app);
    }
  });
});
