// The dashboard's routes, under /dashboard: the public pages, then the route families. Its plugins (cookies,
// sessions, CSRF, helmet, form bodies, views, tenancy, HTML errors) are plugins/dashboard/index.ts, registered with
// these routes in one scope by src/app.ts, so none of their hooks runs on /api/v1 or /telephony.
//
// Building a page: a `FastifyPluginAsyncTypebox` file here, registered below in its route family, each route with
// `hide: true` (not part of the API's OpenAPI document): the signed-in family's hook asks for a user and the
// agency-only family's for an agency user, so a route declares no guard (`fastify.dashboardGuards
// .requireRecentSignIn()` stays a route's preHandler for secrets); an `:id` is resolved once per family by
// `fastify.resolveManaged()` and read with `request.managed()`. Every route declares who may use it, `config.role`
// ('public', or the least role: plugins/dashboard/roles.ts), else it cannot be registered. A handler is a schema
// (schemas/dashboard/), one read through `request.scoped` (the viewer's scope bound) or one src/admin call through
// `request.admin`, and `reply.page()` (the model built beside its template, src/views/pages/<page>.ts) or
// `reply.seeOther()`:
//
//   fastify.post('/clients', { schema: { hide: true, body: CreateClientForm }, attachValidation: true,
//       config: { role: 'admin', formFailure: (request, reply, { message }) => reply.code(400).page(...) } },
//     async (request, reply) => {
//       const client = await request.admin.run(createClient, { ... }, request.admin.actor);
//       return reply.seeOther(`/dashboard/clients/${client.id}`, { kind: 'ok', text: '...' });
//     });
//
// A refused form (validation, AdminError, FormProblem) is not caught here: the one error handler
// (plugins/dashboard/errors.ts) shows the route's `formFailure`. Add the routes to test/dashboard/tenancy.test.ts and
// test/dashboard/roles.test.ts.
import type { FastifyInstance } from 'fastify';
import account from './account.js';
import { clientApiWebhooks, ownApiWebhooks } from './api-webhooks/index.js';
import agents from './agents.js';
import agentsList from './agents-list.js';
import assets from './assets.js';
import auditLog from './audit-log.js';
import { clientCallingRules, ownCallingRules } from './calling-rules.js';
import calls from './calls.js';
import { clientCarrier, ownCarrier } from './carrier.js';
import callsExport from './calls-export.js';
import clients from './clients.js';
import confirmPassword from './confirm-password.js';
import { clientDoNotCall, ownDoNotCall } from './do-not-call.js';
import forgotPassword from './forgot-password.js';
import overview from './overview.js';
import setPassword from './set-password.js';
import signIn from './sign-in.js';
import userRoles from './user-roles.js';
import users, { userActions } from './users.js';

export default async function dashboard(fastify: FastifyInstance) {
  // `/dashboard/` is the same page as `/dashboard`: one address for it (the trailing slash is not ignored elsewhere).
  fastify.get(
    '/',
    { config: { role: 'public' }, schema: { hide: true }, prefixTrailingSlash: 'slash' },
    async (_request, reply) => reply.redirect('/dashboard', 302),
  );

  await fastify.register(assets);
  await fastify.register(signIn);
  await fastify.register(setPassword);
  await fastify.register(forgotPassword);
  // The signed-in family: its hook asks for a user (else the sign-in page, and back), so no route of it declares a
  // guard; its reads take `request.scope`. Inside it, the agency-only family (a client user gets 404).
  await fastify.register(async function signedIn(family) {
    // A user's requests in flight at once are capped (plugins/dashboard/busy.ts): before the body is read.
    family.addHook('onRequest', family.limitUserInFlight);
    family.addHook('preHandler', family.dashboardGuards.requireUser);
    await family.register(confirmPassword);
    await family.register(overview);
    await family.register(account);
    await family.register(auditLog);
    await family.register(ownApiWebhooks);
    await family.register(agentsList);
    await family.register(agents);
    await family.register(calls);
    await family.register(callsExport);
    await family.register(users);
    await family.register(ownDoNotCall);
    await family.register(ownCallingRules);
    await family.register(ownCarrier);
    await family.register(async function agencyOnly(agency) {
      agency.addHook('preHandler', agency.dashboardGuards.requireAgencyUser);
      await agency.register(clients);
      await agency.register(clientApiWebhooks);
      await agency.register(userActions);
      await agency.register(userRoles);
      await agency.register(clientDoNotCall);
      await agency.register(clientCallingRules);
      await agency.register(clientCarrier);
    });
  });
}
