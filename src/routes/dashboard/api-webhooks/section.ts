// The section's own page: the API key, API access, the default agent and the webhook endpoint of one account.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { settingsPage } from '../../../views/pages/api-webhooks.js';
import type { SectionOptions } from '../../../views/pages/api-webhooks-place.js';

export const sectionRoutes: FastifyPluginAsyncTypebox<SectionOptions> = async (fastify, { place }) => {
  fastify.get(place.prefix, { config: { role: 'viewer' }, schema: { hide: true } }, async (request, reply) => {
    const account = await place.account(request, reply);
    return reply.page('api-webhooks', await settingsPage(request, place, account));
  });
};
