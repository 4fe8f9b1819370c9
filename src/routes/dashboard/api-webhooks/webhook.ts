// The webhook endpoint: a form page; a new endpoint, or a rotation asked for, answers with the signing secret in the
// POST's own answer (no-store); a changed URL keeps the secret. Enabling it again.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { ChangedMeanwhile } from '../../../admin/accounts.js';
import { changeWebhookUrl, enableWebhook, setWebhook } from '../../../admin/webhooks.js';
import { CsrfOnlyForm } from '../../../../schemas/dashboard/forms.js';
import { WEBHOOK_URL_MAX_LENGTH, WebhookForm } from '../../../../schemas/dashboard/api-webhooks.js';
import { webhookUrlProblem } from '../../../webhooks/url-policy.js';
import { takePendingForm } from '../confirm-password.js';
import { FormProblem } from '../../../views/form-problem.js';
import { type Account, type SectionOptions } from '../../../views/pages/api-webhooks-place.js';
import { settingsPage } from '../../../views/pages/api-webhooks.js';

const ALREADY_SHOWN =
  'This signing secret was already shown; change the URL with "Also rotate the signing secret" ticked to make a new one if you did not copy it.';
const CHANGED_MEANWHILE =
  'The webhook endpoint changed since the form was shown (was it sent twice?): nothing was changed. Check the URL below.';

/** A change of an endpoint's URL that keeps its signing secret: rotating it, or a first URL, makes a new one. */
const keepsSecret = (body: WebhookForm) => body.replaces !== 'none' && body.rotate !== 'on';

export const webhookRoutes: FastifyPluginAsyncTypebox<SectionOptions> = async (fastify, { place, recent }) => {
  const webhookPage = async (
    reply: FastifyReply,
    account: Account,
    status = 200,
    problem: string | null = null,
    url?: string,
  ) => {
    const endpoint = await reply.request.scoped.endpoint(account);
    return reply.code(status).page('api-webhooks-webhook', {
      title: endpoint ? 'Change the webhook URL' : 'Set a webhook URL',
      account,
      base: place.base(account.id),
      url: url ?? endpoint?.url ?? '',
      exists: Boolean(endpoint),
      replaces: endpoint ? String(endpoint.updatedAt.getTime()) : 'none',
      maxLength: WEBHOOK_URL_MAX_LENGTH,
      problem,
    });
  };
  const secretPage = (account: Account) => ({
    title: 'Your webhook signing secret',
    base: place.base(account.id),
    account,
    what: 'secret' as const,
  });
  fastify.get(
    `${place.prefix}/webhook`,
    { config: { role: 'admin' }, schema: { hide: true }, preHandler: recent },
    async (request, reply) => {
      const account = await place.account(request, reply);
      // A URL sent when the password had to be typed again comes back filled in (the form posts to this path).
      const path = `${place.base(account.id)}/webhook`;
      const kept = takePendingForm(request, { path, action: path });
      return webhookPage(reply, account, 200, null, kept?.url);
    },
  );

  fastify.post(
    `${place.prefix}/webhook`,
    {
      schema: { hide: true, body: WebhookForm },
      attachValidation: true,
      preHandler: recent,
      config: {
        role: 'admin',
        formFailure: async (request, reply, { message, error, invalid }) => {
          const account = await place.account(request, reply);
          const body = invalid ? null : (request.body as WebhookForm);
          // The same form sent twice (a reload, a double click), or the endpoint changed since the form was shown.
          if (body && error instanceof ChangedMeanwhile) {
            if (keepsSecret(body))
              return reply.seeOther(place.base(account.id), { kind: 'error', text: CHANGED_MEANWHILE });
            return reply.page('api-webhooks-secret', { ...secretPage(account), value: null, already: ALREADY_SHOWN });
          }
          return webhookPage(reply, account, 400, message, body?.url.trim());
        },
      },
    },
    async (request, reply) => {
      const account = await place.account(request, reply);
      // "none", or the endpoint's last change (epoch ms) the form was made for (the schema's pattern).
      const replaces = request.body.replaces === 'none' ? null : new Date(Number(request.body.replaces));
      const url = request.body.url.trim();
      // The same rules as setWebhook's, in the tenant's words (its own name the operator's switch for local development).
      const refused = webhookUrlProblem(url, fastify.config.WEBHOOK_ALLOW_PRIVATE_TARGETS, 'tenant');
      if (refused) throw new FormProblem(refused);
      const options = {
        allowPrivate: fastify.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
        replaces,
        now: request.admin.now(),
      };
      if (replaces !== null && keepsSecret(request.body)) {
        // A changed URL keeps the signing secret: the receiver goes on verifying with it.
        await request.admin.run(changeWebhookUrl, account.id, url, { ...options, replaces }, request.admin.actor);
        return reply.seeOther(place.base(account.id), {
          kind: 'ok',
          text: `The webhook URL is now ${url}. The signing secret is unchanged: your receiver keeps verifying with it.`,
        });
      }
      const { secret } = await request.admin.run(setWebhook, account.id, url, options, request.admin.actor);
      return reply.page('api-webhooks-secret', { ...secretPage(account), value: secret, already: null, url });
    },
  );

  fastify.post(
    `${place.prefix}/webhook/enable`,
    {
      schema: { hide: true, body: CsrfOnlyForm },
      config: {
        role: 'admin',
        formFailure: async (request, reply) => {
          const account = await place.account(request, reply);
          const problem = {
            section: 'webhook' as const,
            text: 'There is no webhook endpoint to enable: set a URL first.',
          };
          return reply.code(400).page('api-webhooks', await settingsPage(request, place, account, problem));
        },
      },
    },
    async (request, reply) => {
      const account = await place.account(request, reply);
      const result = await request.admin.run(enableWebhook, account.id, request.admin.actor, request.admin.now());
      const held = result.released === 1 ? '1 held event is' : `${result.released} held events are`;
      const text =
        result.changed_at === null
          ? `The endpoint was already enabled: nothing changed${result.released > 0 ? `, but ${held} sent now` : ''}.`
          : `The endpoint is enabled again, with the same signing secret. ${result.released > 0 ? `${held} being sent now.` : 'No events were held.'}` +
            ' Deliveries whose attempts had run out stay failed: resend them from the delivery log.';
      return reply.seeOther(place.base(account.id), { kind: 'ok', text });
    },
  );
};
