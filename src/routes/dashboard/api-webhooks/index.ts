// Settings → API & Webhooks, for the viewer's own account (/dashboard/settings/api-webhooks) and, for agency users, for
// each client (/dashboard/clients/:id/api-webhooks): one set of routes, registered twice, parameterised by the place.
// The API key and the webhook signing secret are shown once, in the POST's own answer (no-store), never from the
// session; a second send of the same form (reload, double click) changes nothing and says so. Every change goes
// through the same src/admin functions callctl uses, which audit it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { CLIENT, OWN, type Place } from '../../../views/pages/api-webhooks-place.js';
import { accessRoutes } from './access.js';
import { deliveriesRoutes } from './deliveries.js';
import { keyRoutes } from './key.js';
import { sectionRoutes } from './section.js';
import { webhookRoutes } from './webhook.js';

/** The section's routes of one place (its guard and its account come from the family it is registered in). */
function sectionOf(place: Place): FastifyPluginAsyncTypebox {
  return async function apiWebhooks(fastify) {
    fastify.resolveManaged(place.managed, place.param);
    // After re-entering the password: back to the page that shows the button (a POST cannot be repeated by a redirect).
    const base = (request: FastifyRequest) => place.base((request.params as { id?: string }).id ?? '');
    const recent = fastify.dashboardGuards.requireRecentSignIn(
      (request) => `${base(request)}${request.routeOptions.url?.endsWith('/webhook') ? '/webhook' : '/key'}`,
    );
    for (const routes of [sectionRoutes, keyRoutes, accessRoutes, webhookRoutes, deliveriesRoutes])
      await fastify.register(routes, { place, recent });
  };
}

/** The viewer's own settings: in the signed-in family. */
export const ownApiWebhooks = sectionOf(OWN);
/** A client's settings: in the agency-only family. */
export const clientApiWebhooks = sectionOf(CLIENT);
