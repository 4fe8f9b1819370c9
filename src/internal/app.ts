// The internal listener: liveness, readiness (database, and Redis when configured), Prometheus metrics. No auth; not for the internet.
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { App } from '../app.js';
import { useHttpErrors } from '../http-errors.js';
import { withTimeout } from '../jobs/with-timeout.js';
import { describeError } from '../logging/describe-error.js';

const READY_TIMEOUT_MS = 1_500;

function redisProblem(status: string, connectionError: Error | null, commandError: unknown): string {
  if (status === 'ready') return describeError(commandError);
  return connectionError ? describeError(connectionError) : `not connected (${status})`;
}

export async function buildInternalApp(api: App, logger: FastifyBaseLogger) {
  const internal = Fastify({
    loggerInstance: logger.child({ listener: 'internal' }),
    logController: new LogController({ disableRequestLogging: true }),
  });

  internal.get('/health/live', async () => ({ status: 'ok' }));

  await useHttpErrors(internal);

  internal.get('/health/ready', async (_request, reply) => {
    const checks: Record<string, string> = {}; // 'ok' or the reason
    await Promise.all([
      // The pool the service's queries use, so the reason is the driver's own (a refused connection, a timeout).
      withTimeout(api.storage.ping(), READY_TIMEOUT_MS).then(
        () => {
          checks.database = 'ok';
        },
        (error: unknown) => {
          checks.database = describeError(error);
        },
      ),
      api.redis
        ? withTimeout(api.redis.ping(), READY_TIMEOUT_MS).then(
            () => {
              checks.redis = 'ok';
            },
            (error: unknown) => {
              checks.redis = redisProblem(api.redis!.status, api.redisConnectionError(), error);
            },
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

  internal.setNotFoundHandler((request, reply) =>
    reply.notFound(`Route ${request.method} ${request.url.split('?')[0]} not found`),
  );
  await internal.ready();
  return internal;
}
