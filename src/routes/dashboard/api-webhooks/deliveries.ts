// The endpoint's delivery log (keyset pages, newest first), and sending one delivery or every failed one again.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NoSuchDelivery, replayDelivery, resendFailedDeliveries } from '../../../admin/webhooks.js';
import {
  DeliveryLogQuery,
  DeliveryParams,
  ResendFailedForm,
  ResendForm,
} from '../../../../schemas/dashboard/api-webhooks.js';
import { canonicalUuid } from '../../../../schemas/uuid.js';
import { FormProblem } from '../../../views/form-problem.js';
import { disabledReasonWords } from '../../../views/format/notices.js';
import { encodeCursor } from '../../../views/format/cursor.js';
import { ENDPOINT_DISABLED, NO_ENDPOINT } from '../../../views/format/settings.js';
import { parseUtcTime } from '../../../views/format/time.js';
import {
  backFields,
  dayBefore,
  EVENT_CHOICES,
  hereOf,
  logHref,
  readFilters,
  shownDelivery,
  STATUS_CHOICES,
} from '../../../views/pages/api-webhooks-deliveries.js';
import { type Account, type SectionOptions } from '../../../views/pages/api-webhooks-place.js';

const DELIVERIES_PER_PAGE = 25;

/** What "Resend failed since" asks for. */
const SINCE_FORMAT = 'Enter the date and time as YYYY-MM-DD HH:MM (UTC).';

/** The call page a resend from a call's detail view goes back to. */
const callPageOf = (call: string) => `/dashboard/calls/${canonicalUuid(call)}`;

/** The log's filters a resend was sent with, to show the same page of the log again. */
const filtersOf = ({ event, status, from, to, failed, before }: ResendForm): DeliveryLogQuery => ({
  event,
  status,
  from,
  to,
  failed,
  before,
});

export const deliveriesRoutes: FastifyPluginAsyncTypebox<SectionOptions> = async (fastify, { place }) => {
  /** Why a resend was refused (src/admin's `message`), in the tenant's words when it is the endpoint's state. */
  async function resendProblem(request: FastifyRequest, accountId: string, message: string): Promise<string> {
    const endpoint = await request.scoped.endpoint({ id: accountId });
    if (!endpoint) return NO_ENDPOINT;
    return endpoint.enabled ? message : ENDPOINT_DISABLED(endpoint.disabledReason, request.times);
  }

  /** The log's page; `since` is a "Resend failed since" as typed, with what is wrong with it. */
  const logPage = async (
    reply: FastifyReply,
    account: Account,
    query: DeliveryLogQuery,
    status = 200,
    problem: string | null = null,
    since: { value: string; error: string } | null = null,
  ) => {
    const b = place.base(account.id);
    const endpoint = await reply.request.scoped.endpoint(account);
    const read = readFilters(query);
    const refused = Object.keys(read.errors).length > 0;
    const { deliveries, next } =
      endpoint && !refused
        ? await reply.request.scoped.endpointDeliveries(endpoint, {
            filters: read.filters,
            before: read.before,
            limit: DELIVERIES_PER_PAGE,
          })
        : { deliveries: [], next: null };
    const canResend = endpoint?.enabled ?? false;
    const filtered = Object.keys(read.typed).length > 0;
    return reply.code(refused ? 400 : status).page('api-webhooks-deliveries', {
      title: account.kind === 'client' ? `Webhook deliveries · ${account.name}` : 'Webhook deliveries',
      account,
      base: b,
      problem: problem ?? read.problem,
      endpoint: endpoint && {
        url: endpoint.url,
        enabled: endpoint.enabled,
        disabledReason: disabledReasonWords(endpoint.disabledReason, reply.request.times),
      },
      canResend,
      filters: read.typed,
      filterErrors: read.errors,
      filtered,
      eventChoices: EVENT_CHOICES,
      statusChoices: STATUS_CHOICES,
      back: backFields(hereOf(read)),
      resendSince: since?.value ?? dayBefore(reply.request.admin.now()),
      sinceError: since?.error ?? null,
      deliveries: deliveries.map((d) => shownDelivery(d, canResend, reply.request.times)),
      clearHref: filtered ? logHref(b, {}) : null,
      olderHref: next ? logHref(b, { ...read.typed, before: encodeCursor(next) }) : null,
      newestHref: read.before ? logHref(b, read.typed) : null,
    });
  };

  fastify.get(
    `${place.prefix}/deliveries`,
    { config: { role: 'viewer' }, schema: { hide: true, querystring: DeliveryLogQuery }, attachValidation: true },
    async (request, reply) => {
      const account = await place.account(request, reply);
      // A query that is not one of ours (hand-edited) shows the first page, unfiltered.
      return logPage(reply, account, request.validationError ? {} : request.query);
    },
  );

  fastify.post(
    `${place.prefix}/deliveries/:deliveryId/resend`,
    {
      schema: { hide: true, params: DeliveryParams, body: ResendForm },
      attachValidation: true,
      config: {
        role: 'admin',
        formFailure: async (request, reply, { message, error, invalid }) => {
          // Not a delivery id, or one of another account's endpoint: no such delivery, like any unknown one.
          if (request.validationError?.validationContext === 'params' || error instanceof NoSuchDelivery)
            throw fastify.httpErrors.notFound();
          const account = await place.account(request, reply);
          if (invalid) return logPage(reply, account, {}, 400, message);
          const body = request.body as ResendForm;
          const text = await resendProblem(request, account.id, message);
          // From a call's detail view: back to it (the call page checks its own tenancy).
          if (body.call) return reply.seeOther(callPageOf(body.call), { kind: 'error', text });
          return logPage(reply, account, filtersOf(body), 400, text);
        },
      },
    },
    async (request, reply) => {
      const account = await place.account(request, reply);
      await request.admin.run(replayDelivery, canonicalUuid(request.params.deliveryId), request.admin.actor, {
        accountId: account.id,
        now: request.admin.now(),
      });
      const done = {
        kind: 'ok' as const,
        text: 'The delivery will be sent again in a moment, with the same webhook-id.',
      };
      const back = request.body.call
        ? callPageOf(request.body.call)
        : logHref(place.base(account.id), hereOf(readFilters(filtersOf(request.body))));
      return reply.seeOther(back, done);
    },
  );

  fastify.post(
    `${place.prefix}/deliveries/resend-failed`,
    {
      schema: { hide: true, body: ResendFailedForm },
      attachValidation: true,
      config: {
        role: 'admin',
        formFailure: async (request, reply, { message, by }) => {
          const account = await place.account(request, reply);
          if (by === 'admin')
            return logPage(
              reply,
              account,
              { status: 'failed' },
              400,
              await resendProblem(request, account.id, message),
            );
          // Any other refusal is of the time typed: it is shown again with what it should be.
          const sent = (request.body as { since?: unknown } | undefined)?.since;
          return logPage(reply, account, { status: 'failed' }, 400, null, {
            value: typeof sent === 'string' ? sent.slice(0, 40) : '',
            error: SINCE_FORMAT,
          });
        },
      },
    },
    async (request, reply) => {
      const account = await place.account(request, reply);
      const since = parseUtcTime(request.body.since);
      if (!since) throw new FormProblem(SINCE_FORMAT);
      const { resent } = await request.admin.run(
        resendFailedDeliveries,
        account.id,
        since,
        request.admin.actor,
        request.admin.now(),
      );
      const text =
        resent === 0
          ? `No failed delivery since ${request.times.time(since)} is left to send again (none failed, or a resend made at the same time took them).`
          : `${resent === 1 ? '1 failed delivery' : `${resent} failed deliveries`} since ${request.times.time(since)} will be sent again in a moment.`;
      return reply.seeOther(logHref(place.base(account.id), {}), { kind: 'ok', text });
    },
  );
};
