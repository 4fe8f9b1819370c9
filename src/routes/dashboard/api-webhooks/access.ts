// API access (on, or off after a confirmation page naming what stops) and the default agent of triggers.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { setApiAccess } from '../../../admin/accounts.js';
import { setDefaultAgent } from '../../../admin/agents.js';
import { planAllowsApi } from '../../../domain/api-access.js';
import { ApiAccessForm, DefaultAgentForm } from '../../../../schemas/dashboard/api-webhooks.js';
import { canonicalUuid } from '../../../../schemas/uuid.js';
import { FormProblem, refusedField } from '../../../views/form-problem.js';
import { NO_PHONE_DEFAULT } from '../../../views/format/settings.js';
import { type SectionOptions } from '../../../views/pages/api-webhooks-place.js';
import { settingsPage } from '../../../views/pages/api-webhooks.js';

/** The most clients the confirmation names (an agency may have thousands: it says how many more). */
export const AFFECTED_NAMES_MAX = 50;

/** A default agent that is not an id of an agent the account may use ("None set" too). */
const NOT_USABLE = 'That agent is not one this account may use. Choose one from the list.';

export const accessRoutes: FastifyPluginAsyncTypebox<SectionOptions> = async (fastify, { place }) => {
  fastify.post(
    `${place.prefix}/api-access`,
    {
      schema: { hide: true, body: ApiAccessForm },
      attachValidation: true,
      config: {
        role: 'admin',
        formFailure: async (request, reply, { message, error, by }) => {
          // A refusal of src/admin is not one this form words: the error page.
          if (by === 'admin') throw error;
          const account = await place.account(request, reply);
          const problem = { section: 'access' as const, text: message };
          return reply.code(400).page('api-webhooks', await settingsPage(request, place, account, problem));
        },
      },
    },
    async (request, reply) => {
      const account = await place.account(request, reply);
      const access = await request.scoped.apiAccess(account);
      if (!planAllowsApi(access?.plan)) throw new FormProblem('API access requires the agency plan');
      const on = request.body.api_access === 'on';
      if (!on && request.body.confirm !== 'on') {
        // One click would stop every integration of the account (an agency's: its clients' too): ask first, naming them.
        const affected =
          account.kind === 'agency'
            ? await request.scoped.clientsWithApiAccess(account, AFFECTED_NAMES_MAX)
            : { names: [], total: 0 };
        return reply.page('api-webhooks-access', {
          title: 'Switch API access off?',
          account,
          base: place.base(account.id),
          affected: affected.names,
          affectedTotal: affected.total,
        });
      }
      await request.admin.run(setApiAccess, account.id, on, request.admin.actor, request.admin.now());
      const text = on
        ? 'API access is on.'
        : "API access is off: requests with this account's key are refused from now on.";
      return reply.seeOther(place.base(account.id), { kind: 'ok', text });
    },
  );

  fastify.post(
    `${place.prefix}/default-agent`,
    {
      schema: { hide: true, body: DefaultAgentForm },
      attachValidation: true,
      config: {
        role: 'admin',
        // Any refusal of the agent (not an id, not one the account may use) is said in the same words.
        formFailure: async (request, reply, { message, invalid }) => {
          const account = await place.account(request, reply);
          const text = !invalid || refusedField(request) === 'agent_id' ? NOT_USABLE : message;
          const problem = { section: 'agent' as const, text };
          return reply.code(400).page('api-webhooks', await settingsPage(request, place, account, problem));
        },
      },
    },
    async (request, reply) => {
      const account = await place.account(request, reply);
      const { agent: chosen } = await request.admin.run(
        setDefaultAgent,
        account.id,
        canonicalUuid(request.body.agent_id),
        request.admin.actor,
        request.admin.now(),
      );
      if (chosen.phoneNumber === null)
        return reply.seeOther(place.base(account.id), { kind: 'error', text: NO_PHONE_DEFAULT(chosen.name) });
      return reply.seeOther(place.base(account.id), {
        kind: 'ok',
        text: 'The default agent is set: triggers without agent_id use it from now on.',
      });
    },
  );
};
