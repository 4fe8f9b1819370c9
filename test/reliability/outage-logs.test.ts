// PostgreSQL and Redis down for 12 s under a real server process: the log says so in a few lines (one per failure
// kind per 10 s, one when it is over), not a stack trace per background pass; readiness says why.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { startServer } from '../helpers/server-process.js';
import { internalGet, sleep, startOwnPostgres, startOwnRedis, waitUntil } from './process-helpers.js';

const OUTAGE_MS = 12_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

type Line = { level: number; msg: string; suppressed?: number };

describe('a dependency outage in the log', () => {
  it('one line per failure kind per interval while PostgreSQL and Redis are down, one on recovery', async () => {
    const pg = await startOwnPostgres();
    cleanups.push(() => pg.close());
    const redis = await startOwnRedis();
    cleanups.push(() => redis.close());
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-rel-outage-'));
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: pg.url, REDIS_URL: redis.url });
    cleanups.push(() =>
      server.child.exitCode === null && server.child.signalCode === null ? server.stop('SIGKILL') : Promise.resolve(),
    );
    onTestFailed(() =>
      console.error(
        `server log (last 40 lines):\n${server
          .output()
          .split('\n')
          .slice(-40)
          .map((l) => l.slice(0, 600))
          .join('\n')}`,
      ),
    );
    await waitUntil(
      'ready',
      async () => (await internalGet(server.internalPort, '/health/ready')).status === 200,
      20_000,
    );

    const from = server.output().length;
    const linesSince = (offset: number): Line[] =>
      server
        .output()
        .slice(offset)
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
    await pg.stop('fast');
    await redis.kill();
    const ready = await waitUntil(
      'readiness naming both reasons',
      async () => {
        const response = await internalGet(server.internalPort, '/health/ready');
        const body = JSON.parse(response.body) as { checks: Record<string, string> };
        return (
          response.status === 503 &&
          body.checks.database === 'connection refused' &&
          body.checks.redis === 'connection refused' &&
          body
        );
      },
      10_000,
      100,
    );
    expect(ready).toEqual({
      status: 'unavailable',
      checks: { database: 'connection refused', redis: 'connection refused' },
    });
    await sleep(OUTAGE_MS);

    const during = linesSince(from).filter((l) => l.level >= 40);
    const perMessage = new Map<string, number>();
    for (const line of during) perMessage.set(line.msg, (perMessage.get(line.msg) ?? 0) + 1);
    // The first of each kind at once, then one per 10 s: two in 12 s (three allowed for a slow machine's timing).
    for (const [message, count] of perMessage) expect(count, message).toBeLessThanOrEqual(3);
    // The kinds: each loop's passes and LISTEN connection, and Redis reconnecting.
    expect(perMessage.size).toBeGreaterThanOrEqual(3);
    expect(during.length).toBeLessThanOrEqual(20);
    expect(during.some((l) => (l.suppressed ?? 0) > 5)).toBe(true);

    const back = server.output().length;
    await pg.start();
    await redis.start();
    await waitUntil(
      'ready again',
      async () => (await internalGet(server.internalPort, '/health/ready')).status === 200,
      30_000,
    );
    await waitUntil(
      'the recovery lines',
      () => {
        const messages = linesSince(back).map((l) => l.msg);
        return ['dispatcher passes succeed again', 'webhook delivery passes succeed again'].every((m) =>
          messages.includes(m),
        );
      },
      15_000,
    );
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
