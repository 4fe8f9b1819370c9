// Settings → API & Webhooks, for the viewer's own account (/dashboard/settings/api-webhooks) and, for agency users, for
// each client (/dashboard/clients/:id/api-webhooks): one set of routes, registered twice, parameterised by the account.
// The API key and the webhook signing secret are shown once, in the POST's own answer (no-store), never from the
// session; a second send of the same form (reload, double click) changes nothing and says so. Every change goes
// through the same src/admin functions callctl uses, which audit it.
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { ChangedMeanwhile, generateKey, setApiAccess } from '../../admin/accounts.js';
import { setDefaultAgent } from '../../admin/agents.js';
import { AdminError } from '../../admin/errors.js';
import type { Actor } from '../../admin/audit.js';
import {
  enableWebhook,
  NoSuchDelivery,
  replayDelivery,
  resendFailedDeliveries,
  setWebhook,
} from '../../admin/webhooks.js';
import { isUuid } from '../../domain/ids.js';
import { REQUIRED_PLAN } from '../../../plugins/access.js';
import {
  managedAccount,
  requireAgencyUser,
  requireRecentSignIn,
  requireUser,
  viewerOf,
} from '../../../plugins/dashboard/guards.js';
import { CsrfOnlyForm } from '../../../schemas/dashboard/forms.js';
import {
  ApiAccessForm,
  DefaultAgentForm,
  DeliveryLogQuery,
  DeliveryParams,
  GenerateKeyForm,
  ResendFailedForm,
  ResendForm,
  WEBHOOK_URL_MAX_LENGTH,
  WebhookForm,
} from '../../../schemas/dashboard/api-webhooks.js';
import { findAgentById, listClients } from '../../storage/accounts.js';
import { countOpenDeliveries, listEndpointDeliveries, type DeliveryCursor } from '../../storage/deliveries.js';
import { findEndpointOfAccount } from '../../storage/endpoints.js';
import { findActiveKey, findApiAccessState, listUsableAgents } from '../../storage/keys.js';
import { webhookUrlProblem } from '../../webhooks/url-policy.js';
import { formatTime } from './call-view.js';
import { clientIp, formProblem } from './form-problem.js';
import {
  deliveryStatusWords,
  disabledReasonWords,
  ENDPOINT_DISABLED,
  NO_ENDPOINT,
  NO_PHONE_DEFAULT,
} from './settings-words.js';

type Account = Awaited<ReturnType<typeof managedAccount>>;
type Req = FastifyRequest<{ Params: { id?: string } }>;

/** The two places the section lives: the viewer's own settings, and a client's (agency users only). */
interface Place {
  prefix: string;
  guard: preHandlerAsyncHookHandler;
  account(request: Req, reply: FastifyReply): Promise<Account>;
  base(accountId: string): string;
}

const OWN: Place = {
  prefix: '/settings/api-webhooks',
  guard: requireUser,
  account: (request, reply) => managedAccount(request, reply, viewerOf(request).accountId),
  base: () => '/dashboard/settings/api-webhooks',
};

const CLIENT: Place = {
  prefix: '/clients/:id/api-webhooks',
  guard: requireAgencyUser,
  // Only a client of the viewer's agency: the agency's own id here is no client page (404, like any other).
  account: async (request, reply) => {
    const account = await managedAccount(request, reply, request.params.id ?? '');
    if (account.kind !== 'client') throw reply.server.httpErrors.notFound();
    return account;
  },
  base: (accountId) => `/dashboard/clients/${accountId}/api-webhooks`,
};

const AGENTS_LISTED = 500;
const DELIVERIES_PER_PAGE = 25;
const ALREADY_SHOWN = {
  key: 'This key was already shown; generate a new one if you did not copy it.',
  secret: 'This signing secret was already shown; set the URL again to make a new one if you did not copy it.',
};

const when = (at: Date | null | undefined) => (at ? formatTime(at) : null);

function actorOf(request: FastifyRequest): Actor {
  return { kind: 'user', userId: viewerOf(request).id, ip: clientIp(request) };
}

/** "none", or what the form was made for: a key id, or an endpoint's updatedAt (epoch ms). Undefined: not one of those. */
function parseKeyVersion(value: string): string | null | undefined {
  if (value === 'none') return null;
  return isUuid(value) ? value.toLowerCase() : undefined;
}
function parseEndpointVersion(value: string): Date | null | undefined {
  if (value === 'none') return null;
  return /^\d{1,15}$/.test(value) ? new Date(Number(value)) : undefined;
}

/** The "since" of a resend: a UTC date and time as a datetime-local field sends it (seconds optional). */
function parseSince(value: string): Date | null {
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)$/.exec(value.trim());
  if (!match) return null;
  const at = new Date(`${match[1]}T${match[2]}Z`);
  return Number.isNaN(at.getTime()) ? null : at;
}

function encodeCursor(cursor: DeliveryCursor): string {
  return `${cursor.createdAt.toISOString()}_${cursor.id}`;
}
function decodeCursor(value: string | undefined): DeliveryCursor | undefined {
  const [at, id] = value?.split('_') ?? [];
  if (!at || !id || !isUuid(id) || Number.isNaN(Date.parse(at))) return undefined;
  return { createdAt: new Date(at), id };
}
function logHref(base: string, query: { failed?: string | undefined; before?: string | undefined }): string {
  const params = new URLSearchParams();
  if (query.failed === '1') params.set('failed', '1');
  if (query.before) params.set('before', query.before);
  const search = params.toString();
  return `${base}/deliveries${search ? `?${search}` : ''}`;
}

export default async function apiWebhooks(fastify: FastifyInstance) {
  const { prisma } = fastify;

  /** Why a resend was refused, in the tenant's words when it is the endpoint's state. */
  async function resendProblem(accountId: string, error: AdminError): Promise<string> {
    const endpoint = await findEndpointOfAccount(prisma, accountId);
    if (!endpoint) return NO_ENDPOINT;
    return endpoint.enabled ? error.message : ENDPOINT_DISABLED(endpoint.disabledReason);
  }

  /** Everything the section shows about `account`; `problem` goes next to the form it is about. */
  async function settings(place: Place, account: Account, problem: { section: string; text: string } | null = null) {
    const [access, key, agents, endpoint] = await Promise.all([
      findApiAccessState(prisma, account.id),
      findActiveKey(prisma, account.id),
      listUsableAgents(prisma, account, AGENTS_LISTED),
      findEndpointOfAccount(prisma, account.id),
    ]);
    const counts = endpoint ? await countOpenDeliveries(prisma, endpoint.id) : null;
    const defaultAgent = access?.defaultAgentId ? await findAgentById(prisma, access.defaultAgentId) : null;
    const planAllows = access?.plan === REQUIRED_PLAN;
    return {
      title: account.kind === 'client' ? `API & Webhooks · ${account.name}` : 'Settings → API & Webhooks',
      account: { id: account.id, name: account.name, kind: account.kind },
      base: place.base(account.id),
      // On a client's page (agency users): back to the client detail page it is a section of.
      clientHref: place === CLIENT ? `/dashboard/clients/${account.id}` : null,
      planAllows,
      planMessage: planAllows ? null : 'API access requires the agency plan',
      key: key && { prefix: key.displayPrefix, createdAt: when(key.createdAt), lastUsed: when(key.lastUsedAt) },
      access: {
        on: access?.accountSwitch ?? false,
        agencyOff: access?.agencySwitch === false,
        agencyName: access?.agencyName ?? null,
      },
      agents: agents.map((a) => ({
        id: a.id,
        label: a.accountId === account.id ? a.name : `${a.name} (${a.accountName})`,
        phone: a.phoneNumber,
      })),
      agentsCapped: agents.length >= AGENTS_LISTED,
      defaultAgentId: access?.defaultAgentId ?? null,
      // Accepted silently before: every trigger without agent_id then gets 400 "Agent has no phone number assigned".
      defaultAgentWithoutPhone: defaultAgent !== null && defaultAgent.phoneNumber === null,
      endpoint: endpoint && {
        url: endpoint.url,
        enabled: endpoint.enabled,
        disabledReason: disabledReasonWords(endpoint.disabledReason),
        updatedAt: when(endpoint.updatedAt),
        pending: counts?.pending ?? 0,
        failed: counts?.failed ?? 0,
        held: counts?.held ?? 0,
        heldSince: when(counts?.heldSince),
      },
      problem,
    };
  }

  for (const place of [OWN, CLIENT]) {
    const base = (request: Req) => place.base(request.params.id ?? '');
    // After re-entering the password: back to the page that shows the button (a POST cannot be repeated by a redirect).
    const recent = requireRecentSignIn(
      (request) => `${base(request as Req)}${request.routeOptions.url?.endsWith('/webhook') ? '/webhook' : '/key'}`,
    );
    const showSettings = async (
      reply: FastifyReply,
      account: Account,
      status: number,
      problem: { section: string; text: string },
    ) => reply.code(status).page('api-webhooks', await settings(place, account, problem));

    fastify.get<{ Params: { id?: string } }>(
      place.prefix,
      { schema: { hide: true }, preHandler: place.guard },
      async (request, reply) => {
        const account = await place.account(request, reply);
        return reply.page('api-webhooks', await settings(place, account));
      },
    );

    // The API key: a confirmation page, then the key in the POST's own answer.
    const keyPage = async (reply: FastifyReply, account: Account, status = 200, problem: string | null = null) => {
      const [key, access] = await Promise.all([
        findActiveKey(prisma, account.id),
        findApiAccessState(prisma, account.id),
      ]);
      return reply.code(status).page('api-webhooks-key', {
        title: 'Generate a new API key',
        account,
        base: place.base(account.id),
        key: key && { prefix: key.displayPrefix, createdAt: when(key.createdAt) },
        replaces: key?.id ?? 'none',
        planMessage: access?.plan === REQUIRED_PLAN ? null : 'API access requires the agency plan',
        problem,
      });
    };
    fastify.get<{ Params: { id?: string } }>(
      `${place.prefix}/key`,
      { schema: { hide: true }, preHandler: [place.guard, recent] },
      async (request, reply) => keyPage(reply, await place.account(request, reply)),
    );

    fastify.post<{ Params: { id?: string }; Body: GenerateKeyForm }>(
      `${place.prefix}/key`,
      { schema: { hide: true, body: GenerateKeyForm }, attachValidation: true, preHandler: [place.guard, recent] },
      async (request, reply) => {
        const account = await place.account(request, reply);
        const problem = formProblem(request);
        const replaces = problem ? undefined : parseKeyVersion(request.body.replaces);
        if (replaces === undefined)
          return keyPage(
            reply,
            account,
            400,
            problem ?? 'The form was not filled in as expected. Reload the page and try again.',
          );
        const access = await findApiAccessState(prisma, account.id);
        if (access?.plan !== REQUIRED_PLAN) return keyPage(reply, account, 400, 'API access requires the agency plan');
        if (replaces !== null && request.body.confirm !== 'on')
          return keyPage(reply, account, 400, 'Tick the box to confirm that the current key stops working at once.');
        try {
          const { key } = await generateKey(prisma, account.id, actorOf(request), { replaces, now: fastify.now() });
          return reply.page('api-webhooks-secret', {
            title: 'Your new API key',
            base: place.base(account.id),
            account,
            what: 'key',
            value: key,
            replaced: replaces !== null,
            already: null,
          });
        } catch (error) {
          if (!(error instanceof ChangedMeanwhile)) throw error;
          return reply.page('api-webhooks-secret', {
            title: 'Your new API key',
            base: place.base(account.id),
            account,
            what: 'key',
            value: null,
            already: ALREADY_SHOWN.key,
          });
        }
      },
    );

    fastify.post<{ Params: { id?: string }; Body: ApiAccessForm }>(
      `${place.prefix}/api-access`,
      { schema: { hide: true, body: ApiAccessForm }, attachValidation: true, preHandler: place.guard },
      async (request, reply) => {
        const account = await place.account(request, reply);
        const problem = formProblem(request);
        if (problem) return showSettings(reply, account, 400, { section: 'access', text: problem });
        const access = await findApiAccessState(prisma, account.id);
        if (access?.plan !== REQUIRED_PLAN)
          return showSettings(reply, account, 400, { section: 'access', text: 'API access requires the agency plan' });
        const on = request.body.api_access === 'on';
        if (!on && request.body.confirm !== 'on') {
          // One click would stop every integration of the account (an agency's: its clients' too): ask first, naming them.
          const clients = account.kind === 'agency' ? await listClients(prisma, account.id) : [];
          return reply.page('api-webhooks-access', {
            title: 'Switch API access off?',
            account,
            base: place.base(account.id),
            affected: clients.filter((c) => c.apiAccessEnabled).map((c) => c.name),
          });
        }
        await setApiAccess(prisma, account.id, on, actorOf(request), fastify.now());
        const text = on
          ? 'API access is on.'
          : "API access is off: requests with this account's key are refused from now on.";
        return reply.seeOther(place.base(account.id), { kind: 'ok', text });
      },
    );

    fastify.post<{ Params: { id?: string }; Body: DefaultAgentForm }>(
      `${place.prefix}/default-agent`,
      { schema: { hide: true, body: DefaultAgentForm }, attachValidation: true, preHandler: place.guard },
      async (request, reply) => {
        const account = await place.account(request, reply);
        const problem = formProblem(request);
        if (problem) return showSettings(reply, account, 400, { section: 'agent', text: problem });
        try {
          await setDefaultAgent(
            prisma,
            account.id,
            request.body.agent_id.toLowerCase(),
            actorOf(request),
            fastify.now(),
          );
        } catch (error) {
          if (!(error instanceof AdminError)) throw error;
          return showSettings(reply, account, 400, {
            section: 'agent',
            text: 'That agent is not one this account may use. Choose one from the list.',
          });
        }
        const chosen = await findAgentById(prisma, request.body.agent_id.toLowerCase());
        if (chosen && chosen.phoneNumber === null)
          return reply.seeOther(place.base(account.id), { kind: 'error', text: NO_PHONE_DEFAULT(chosen.name) });
        return reply.seeOther(place.base(account.id), {
          kind: 'ok',
          text: 'The default agent is set: triggers without agent_id use it from now on.',
        });
      },
    );

    // The webhook endpoint: a form page, then the signing secret in the POST's own answer.
    const webhookPage = async (
      reply: FastifyReply,
      account: Account,
      status = 200,
      problem: string | null = null,
      url?: string,
    ) => {
      const endpoint = await findEndpointOfAccount(prisma, account.id);
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
    fastify.get<{ Params: { id?: string } }>(
      `${place.prefix}/webhook`,
      { schema: { hide: true }, preHandler: [place.guard, recent] },
      async (request, reply) => webhookPage(reply, await place.account(request, reply)),
    );

    fastify.post<{ Params: { id?: string }; Body: WebhookForm }>(
      `${place.prefix}/webhook`,
      { schema: { hide: true, body: WebhookForm }, attachValidation: true, preHandler: [place.guard, recent] },
      async (request, reply) => {
        const account = await place.account(request, reply);
        const problem = formProblem(request);
        const replaces = problem ? undefined : parseEndpointVersion(request.body.replaces);
        if (replaces === undefined)
          return webhookPage(
            reply,
            account,
            400,
            problem ?? 'The form was not filled in as expected. Reload the page and try again.',
          );
        const url = request.body.url.trim();
        const page = { title: 'Your webhook signing secret', base: place.base(account.id), account, what: 'secret' };
        // The same rules as setWebhook's, in the tenant's words (its own name the operator's switch for local development).
        const refused = webhookUrlProblem(url, fastify.config.WEBHOOK_ALLOW_PRIVATE_TARGETS, 'tenant');
        if (refused) return webhookPage(reply, account, 400, refused, url);
        try {
          const { secret } = await setWebhook(
            prisma,
            account.id,
            url,
            { allowPrivate: fastify.config.WEBHOOK_ALLOW_PRIVATE_TARGETS, replaces, now: fastify.now() },
            actorOf(request),
          );
          return reply.page('api-webhooks-secret', { ...page, value: secret, already: null, url });
        } catch (error) {
          if (error instanceof ChangedMeanwhile)
            return reply.page('api-webhooks-secret', { ...page, value: null, already: ALREADY_SHOWN.secret });
          if (error instanceof AdminError) return webhookPage(reply, account, 400, error.message, url);
          throw error;
        }
      },
    );

    fastify.post<{ Params: { id?: string }; Body: CsrfOnlyForm }>(
      `${place.prefix}/webhook/enable`,
      { schema: { hide: true, body: CsrfOnlyForm }, preHandler: place.guard },
      async (request, reply) => {
        const account = await place.account(request, reply);
        try {
          const result = await enableWebhook(prisma, account.id, actorOf(request), fastify.now());
          const held = result.released === 1 ? '1 held event is' : `${result.released} held events are`;
          const text =
            result.changed_at === null
              ? `The endpoint was already enabled: nothing changed${result.released > 0 ? `, but ${held} sent now` : ''}.`
              : `The endpoint is enabled again, with the same signing secret. ${result.released > 0 ? `${held} being sent now.` : 'No events were held.'}` +
                ' Deliveries whose attempts had run out stay failed: resend them from the delivery log.';
          return reply.seeOther(place.base(account.id), { kind: 'ok', text });
        } catch (error) {
          if (!(error instanceof AdminError)) throw error;
          return showSettings(reply, account, 400, {
            section: 'webhook',
            text: 'There is no webhook endpoint to enable: set a URL first.',
          });
        }
      },
    );

    // The endpoint's delivery log, and sending deliveries again.
    const logPage = async (
      reply: FastifyReply,
      account: Account,
      query: DeliveryLogQuery,
      status = 200,
      problem: string | null = null,
    ) => {
      const b = place.base(account.id);
      const endpoint = await findEndpointOfAccount(prisma, account.id);
      const before = decodeCursor(query.before);
      const failedOnly = query.failed === '1';
      const { deliveries, next } = endpoint
        ? await listEndpointDeliveries(prisma, endpoint.id, { failedOnly, before, limit: DELIVERIES_PER_PAGE })
        : { deliveries: [], next: null };
      return reply.code(status).page('api-webhooks-deliveries', {
        title: account.kind === 'client' ? `Webhook deliveries · ${account.name}` : 'Webhook deliveries',
        account,
        base: b,
        problem,
        failedOnly,
        before: before ? encodeCursor(before) : null,
        endpoint: endpoint && {
          url: endpoint.url,
          enabled: endpoint.enabled,
          disabledReason: disabledReasonWords(endpoint.disabledReason),
        },
        deliveries: deliveries.map((d) => ({
          ...d,
          statusWords: deliveryStatusWords(d.status),
          at: when(d.createdAt),
          nextAt: d.status === 'pending' ? when(d.nextAttemptAt) : null,
          heldReason: d.status === 'held' ? disabledReasonWords(d.heldReason) : null,
          attempts: d.attempts.map((a) => ({ ...a, at: when(a.startedAt) })),
        })),
        allHref: logHref(b, {}),
        failedHref: logHref(b, { failed: '1' }),
        olderHref: next ? logHref(b, { failed: query.failed, before: encodeCursor(next) }) : null,
        newestHref: before ? logHref(b, { failed: query.failed }) : null,
      });
    };

    fastify.get<{ Params: { id?: string }; Querystring: DeliveryLogQuery }>(
      `${place.prefix}/deliveries`,
      { schema: { hide: true, querystring: DeliveryLogQuery }, attachValidation: true, preHandler: place.guard },
      async (request, reply) => {
        const account = await place.account(request, reply);
        // A query that is not one of ours (hand-edited) shows the first page, unfiltered.
        return logPage(reply, account, request.validationError ? {} : request.query);
      },
    );

    fastify.post<{ Params: DeliveryParams; Body: ResendForm }>(
      `${place.prefix}/deliveries/:deliveryId/resend`,
      {
        schema: { hide: true, params: DeliveryParams, body: ResendForm },
        attachValidation: true,
        preHandler: place.guard,
      },
      async (request, reply) => {
        const account = await place.account(request, reply);
        if (request.validationError?.validationContext === 'body')
          return logPage(reply, account, {}, 400, formProblem(request));
        const query = { failed: request.body.failed, before: request.body.before };
        // From a call's detail view: back to it (the call page checks its own tenancy).
        const callPage = request.body.call ? `/dashboard/calls/${request.body.call.toLowerCase()}` : null;
        try {
          // A delivery of another account's endpoint is NoSuchDelivery, answered as any unknown id.
          await replayDelivery(prisma, request.params.deliveryId.toLowerCase(), actorOf(request), {
            accountId: account.id,
            now: fastify.now(),
          });
        } catch (error) {
          if (error instanceof NoSuchDelivery) throw fastify.httpErrors.notFound();
          if (!(error instanceof AdminError)) throw error;
          const text = await resendProblem(account.id, error);
          if (callPage) return reply.seeOther(callPage, { kind: 'error', text });
          return logPage(reply, account, query, 400, text);
        }
        const done = {
          kind: 'ok' as const,
          text: 'The delivery will be sent again in a moment, with the same webhook-id.',
        };
        return reply.seeOther(callPage ?? logHref(place.base(account.id), query), done);
      },
    );

    fastify.post<{ Params: { id?: string }; Body: ResendFailedForm }>(
      `${place.prefix}/deliveries/resend-failed`,
      { schema: { hide: true, body: ResendFailedForm }, attachValidation: true, preHandler: place.guard },
      async (request, reply) => {
        const account = await place.account(request, reply);
        const since = request.validationError ? null : parseSince(request.body.since);
        if (!since)
          return logPage(reply, account, { failed: '1' }, 400, 'Enter the date and time as YYYY-MM-DD HH:MM (UTC).');
        try {
          const { resent } = await resendFailedDeliveries(prisma, account.id, since, actorOf(request), fastify.now());
          const text =
            resent === 0
              ? `No delivery failed since ${when(since)}: nothing to send again.`
              : `${resent === 1 ? '1 failed delivery' : `${resent} failed deliveries`} since ${when(since)} will be sent again in a moment.`;
          return reply.seeOther(logHref(place.base(account.id), {}), { kind: 'ok', text });
        } catch (error) {
          if (!(error instanceof AdminError)) throw error;
          return logPage(reply, account, { failed: '1' }, 400, await resendProblem(account.id, error));
        }
      },
    );
  }
}
