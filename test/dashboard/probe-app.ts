// The real app plus a second dashboard scope at /probe with test routes behind a guard: for the guards and lookups
// tested apart from any page (requireRecentSignIn; an account resolved by a route family).
import Fastify, { type FastifyInstance, type preHandlerAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { app, fastifyOptions, registerDashboard } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { validatorCompiler } from '../../schemas/validation.js';
import { freshDatabase } from '../helpers/database.js';
import { atFileEnd } from '../helpers/file-end.js';

const open: FastifyInstance[] = [];
atFileEnd(async () => {
  for (const instance of open.splice(0)) await instance.close();
});

/**
 * `GET /probe/guarded` and `POST /probe/guarded` answer 200 "passed" once the guard `guardOf` picks from the
 * dashboard's decorators (e.g. `fastify.dashboardGuards`) lets them through.
 */
export async function buildProbeApp(
  guardOf: (scope: FastifyInstance) => preHandlerAsyncHookHandler,
  env: Record<string, string>,
  clock: () => Date,
  moreRoutes?: (scope: FastifyInstance) => void,
) {
  const { url } = await freshDatabase();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: '.data/test',
    DISPATCH_ENABLED: 'false',
    WEBHOOK_DELIVERY_ENABLED: 'false',
    ...env,
    DATABASE_URL: url,
  });
  const instance = Fastify(fastifyOptions(config));
  instance.setValidatorCompiler(validatorCompiler);
  // Every route as "METHOD /path" (HEAD left out), for the tenancy test's check that each one is classified.
  const routes: string[] = [];
  // And the role each declares (plugins/dashboard/roles.ts), for the roles test's table.
  const roles = new Map<string, unknown>();
  instance.addHook('onRoute', (route) => {
    for (const method of ([] as string[]).concat(route.method))
      if (method !== 'HEAD') {
        routes.push(`${method} ${route.url}`);
        roles.set(`${method} ${route.url}`, route.config?.role);
      }
  });
  await instance.register(fp(app, { name: 'app' }), { config, databaseUrl: url, clock });
  await instance.register(
    async (scope) => {
      await registerDashboard(scope, config);
      const guard = guardOf(scope);
      // 'public' for the roles hook (plugins/dashboard/roles.ts): these probe the guard alone.
      const options = { schema: { hide: true }, preHandler: guard, config: { role: 'public' as const } };
      scope.get('/guarded', options, async () => 'passed');
      scope.post('/guarded', options, async () => 'passed');
      moreRoutes?.(scope);
    },
    { prefix: '/probe' },
  );
  await instance.ready();
  open.push(instance);
  // Not the instance itself: it is thenable, and `await` would unwrap it.
  return { probe: instance, routes, roles };
}
