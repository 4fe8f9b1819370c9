// The internal listener: liveness, readiness (database, and Redis when configured), Prometheus metrics. No auth; not for the internet.
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { App } from '../app.js';

const READY_TIMEOUT_MS = 1_500;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref())]);
}

export async function buildInternalApp(api: App, logger: FastifyBaseLogger) {
  const internal = Fastify({ loggerInstance: logger.child({ listener: 'internal' }), logController: new LogController({ disableRequestLogging: true }) });

  internal.get('/health/live', async () => ({ status: 'ok' }));

  internal.get('/health/ready', async (_request, reply) => {
    const checks: Record<string, 'ok' | string> = {};
    await Promise.all([
      withTimeout(api.prisma.$queryRaw`SELECT 1`, READY_TIMEOUT_MS).then(
        () => { checks.database = 'ok'; },
        (error: Error) => { checks.database = error.message.split('\n')[0] ?? 'error'; },
      ),
      api.redis
        ? withTimeout(api.redis.ping(), READY_TIMEOUT_MS).then(
            () => { checks.redis = 'ok'; },
            (error: Error) => { checks.redis = error.message; },
          )
        : Promise.resolve(),
    ]);
    const ready = Object.values(checks).every((c) => c === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks });
  });

  internal.get('/metrics', async (_request, reply) => {
    const { register } = api.metrics;
    return reply.type(register.contentType).send(await register.metrics());
  });

  internal.setNotFoundHandler((request, reply) => reply.code(404).send({ success: false, error: `Route ${request.method} ${request.url.split('?')[0]} not found` }));
  await internal.ready();
  return internal;
}
