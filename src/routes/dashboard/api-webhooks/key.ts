// The API key: a confirmation page, then the key in the POST's own answer (no-store), never from the session.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { ChangedMeanwhile, generateKey } from '../../../admin/accounts.js';
import { planAllowsApi } from '../../../domain/api-access.js';
import { GenerateKeyForm } from '../../../../schemas/dashboard/api-webhooks.js';
import { canonicalUuid } from '../../../../schemas/uuid.js';
import { FormProblem } from '../../../views/form-problem.js';
import { type Account, type SectionOptions } from '../../../views/pages/api-webhooks-place.js';

const ALREADY_SHOWN = 'This key was already shown; generate a new one if you did not copy it.';

export const keyRoutes: FastifyPluginAsyncTypebox<SectionOptions> = async (fastify, { place, recent }) => {
  const keyPage = async (reply: FastifyReply, account: Account, status = 200, problem: string | null = null) => {
    const scoped = reply.request.scoped;
    const [key, access] = await Promise.all([scoped.activeKey(account), scoped.apiAccess(account)]);
    return reply.code(status).page('api-webhooks-key', {
      title: 'Generate a new API key',
      account,
      base: place.base(account.id),
      key: key && { prefix: key.displayPrefix, createdAt: reply.request.times.time(key.createdAt) },
      replaces: key?.id ?? 'none',
      planMessage: planAllowsApi(access?.plan) ? null : 'API access requires the agency plan',
      problem,
    });
  };
  fastify.get(
    `${place.prefix}/key`,
    { config: { role: 'admin' }, schema: { hide: true }, preHandler: recent },
    async (request, reply) => keyPage(reply, await place.account(request, reply)),
  );

  fastify.post(
    `${place.prefix}/key`,
    {
      schema: { hide: true, body: GenerateKeyForm },
      attachValidation: true,
      preHandler: recent,
      config: {
        role: 'admin',
        formFailure: async (request, reply, { status, message, error, by }) => {
          const account = await place.account(request, reply);
          // The form sent twice (a reload, a double click): the key made the first time is not shown again.
          if (error instanceof ChangedMeanwhile)
            return reply.page('api-webhooks-secret', {
              title: 'Your new API key',
              base: place.base(account.id),
              account,
              what: 'key',
              value: null,
              already: ALREADY_SHOWN,
            });
          // Any other refusal of src/admin is not one this form words: the error page.
          if (by === 'admin') throw error;
          return keyPage(reply, account, status, message);
        },
      },
    },
    async (request, reply) => {
      const account = await place.account(request, reply);
      // "none", or the key id the form was made for (the schema's pattern).
      const replaces = request.body.replaces === 'none' ? null : canonicalUuid(request.body.replaces);
      const access = await request.scoped.apiAccess(account);
      if (!planAllowsApi(access?.plan)) throw new FormProblem('API access requires the agency plan');
      if (replaces !== null && request.body.confirm !== 'on')
        throw new FormProblem('Tick the box to confirm that the current key stops working at once.');
      const { key } = await request.admin.run(generateKey, account.id, request.admin.actor, {
        replaces,
        now: request.admin.now(),
      });
      return reply.page('api-webhooks-secret', {
        title: 'Your new API key',
        base: place.base(account.id),
        account,
        what: 'key',
        value: key,
        replaced: replaces !== null,
        already: null,
      });
    },
  );
};
