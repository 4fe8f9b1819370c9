// /health/ready says why the service is not ready, in words an operator can act on, not an empty string.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildInternalApp } from '../../src/internal/app.js';
import { buildTestApp } from '../helpers/app.js';
import { freshDatabase, redisUrl } from '../helpers/database.js';

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('/health/ready', () => {
  it('names the reason of each dependency that is down', async () => {
    const { app } = await buildTestApp({
      databaseUrl: `postgresql://postgres@127.0.0.1:${await closedPort()}/nowhere`,
      env: { REDIS_URL: `redis://127.0.0.1:${await closedPort()}` },
    });
    const internal = await buildInternalApp(app, app.log);
    try {
      const response = await internal.inject({ method: 'GET', url: '/health/ready' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        status: 'unavailable',
        checks: { database: 'connection refused', redis: 'connection refused' },
      });
    } finally {
      await internal.close();
    }
  });

  it.skipIf(!redisUrl())('is ok when both answer', async () => {
    const { url } = await freshDatabase();
    const { app } = await buildTestApp({ databaseUrl: url, env: { REDIS_URL: redisUrl()! } });
    const internal = await buildInternalApp(app, app.log);
    try {
      // A Redis command may take 40 ms at most (plugins/redis.ts): on a starved machine one probe can miss that, as an
      // orchestrator's probe would, and the next one answers. Five probes, a fifth of a second apart.
      const answers: unknown[] = [];
      for (let probe = 0; probe < 5; probe++) {
        const response = await internal.inject({ method: 'GET', url: '/health/ready' });
        answers.push(response.json());
        if (response.statusCode === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(answers.at(-1), JSON.stringify(answers)).toEqual({
        status: 'ok',
        checks: { database: 'ok', redis: 'ok' },
      });
    } finally {
      await internal.close();
    }
  });
});

describe('the internal listener', () => {
  it('answers an unknown route 404 in the envelope', async () => {
    const { app } = await buildTestApp();
    const internal = await buildInternalApp(app, app.log);
    try {
      const response = await internal.inject({ method: 'GET', url: '/nope?x=1' });
      expect([response.statusCode, response.json()]).toEqual([
        404,
        { success: false, error: 'Route GET /nope not found' },
      ]);
    } finally {
      await internal.close();
    }
  });
});
