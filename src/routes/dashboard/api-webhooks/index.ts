// Settings → API & Webhooks, for the viewer's own account (/dashboard/settings/api-webhooks) and, for agency users, for
// each client (/dashboard/clients/:id/api-webhooks): one set of routes, registered twice, parameterised by the place.
// The API key and the webhook signing secret are shown once, in the POST's own answer (no-store), never from the
// session; a second send of the same form (reload, double click) changes nothing and says so. Every change goes
// through the same src/admin functions callctl uses, which audit it.
import type { FastifyInstance } from 'fastify';
import { accessRoutes } from './access.js';
import { deliveriesRoutes } from './deliveries.js';
import { keyRoutes } from './key.js';
import { CLIENT, OWN, recentSignIn, type Place } from './place.js';
import { sectionRoutes } from './section.js';
import { webhookRoutes } from './webhook.js';

/** The section's routes of one place (its guard and its account come from the family it is registered in). */
function sectionOf(place: Place) {
  return async function apiWebhooks(fastify: FastifyInstance) {
    fastify.resolveManaged(place.managed, place.param);
    const recent = recentSignIn(fastify, place);
    sectionRoutes(fastify, place);
    keyRoutes(fastify, place, recent);
    accessRoutes(fastify, place);
    webhookRoutes(fastify, place, recent);
    deliveriesRoutes(fastify, place);
  };
}

/** The viewer's own settings: in the signed-in family. */
export const ownApiWebhooks = sectionOf(OWN);
/** A client's settings: in the agency-only family. */
export const clientApiWebhooks = sectionOf(CLIENT);
