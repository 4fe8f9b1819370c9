// The endpoint's delivery log (keyset pages, newest first), and sending one delivery or every failed one again.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../../../admin/errors.js';
import { NoSuchDelivery, replayDelivery, resendFailedDeliveries } from '../../../admin/webhooks.js';
import {
  DeliveryLogQuery,
  DeliveryParams,
  ResendFailedForm,
  ResendForm,
} from '../../../../schemas/dashboard/api-webhooks.js';
import { canonicalUuid } from '../../../../schemas/uuid.js';
import { formProblem } from '../../../views/form-problem.js';
import { disabledReasonWords } from '../../../views/format/notices.js';
import { encodeCursor } from '../../../views/format/cursor.js';
import { ENDPOINT_DISABLED, NO_ENDPOINT } from '../../../views/format/settings.js';
import { formatTime, parseUtcTime } from '../../../views/format/time.js';
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
import { type Account, type Place, type Routes } from './place.js';

const DELIVERIES_PER_PAGE = 25;

export function deliveriesRoutes(fastify: Routes, place: Place) {
  /** Why a resend was refused, in the tenant's words when it is the endpoint's state. */
  async function resendProblem(request: FastifyRequest, accountId: string, error: AdminError): Promise<string> {
    const endpoint = await request.scoped.endpoint({ id: accountId });
    if (!endpoint) return NO_ENDPOINT;
    return endpoint.enabled ? error.message : ENDPOINT_DISABLED(endpoint.disabledReason);
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
        disabledReason: disabledReasonWords(endpoint.disabledReason),
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
      deliveries: deliveries.map((d) => shownDelivery(d, canResend)),
      clearHref: filtered ? logHref(b, {}) : null,
      olderHref: next ? logHref(b, { ...read.typed, before: encodeCursor(next) }) : null,
      newestHref: read.before ? logHref(b, read.typed) : null,
    });
  };

  fastify.get(
    `${place.prefix}/deliveries`,
    { schema: { hide: true, querystring: DeliveryLogQuery }, attachValidation: true },
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
    },
    async (request, reply) => {
      // Not a delivery id: no such delivery, like any unknown one.
      if (request.validationError?.validationContext === 'params') throw fastify.httpErrors.notFound();
      const account = await place.account(request, reply);
      if (request.validationError?.validationContext === 'body')
        return logPage(reply, account, {}, 400, formProblem(request));
      const { event, status, from, to, failed, before } = request.body;
      const query = { event, status, from, to, failed, before };
      // From a call's detail view: back to it (the call page checks its own tenancy).
      const callPage = request.body.call ? `/dashboard/calls/${canonicalUuid(request.body.call)}` : null;
      try {
        // A delivery of another account's endpoint is NoSuchDelivery, answered as any unknown id.
        await request.admin.run(replayDelivery, canonicalUuid(request.params.deliveryId), request.admin.actor, {
          accountId: account.id,
          now: request.admin.now(),
        });
      } catch (error) {
        if (error instanceof NoSuchDelivery) throw fastify.httpErrors.notFound();
        if (!(error instanceof AdminError)) throw error;
        const text = await resendProblem(request, account.id, error);
        if (callPage) return reply.seeOther(callPage, { kind: 'error', text });
        return logPage(reply, account, query, 400, text);
      }
      const done = {
        kind: 'ok' as const,
        text: 'The delivery will be sent again in a moment, with the same webhook-id.',
      };
      return reply.seeOther(callPage ?? logHref(place.base(account.id), hereOf(readFilters(query))), done);
    },
  );

  fastify.post(
    `${place.prefix}/deliveries/resend-failed`,
    { schema: { hide: true, body: ResendFailedForm }, attachValidation: true },
    async (request, reply) => {
      const account = await place.account(request, reply);
      const since = request.validationError ? null : parseUtcTime(request.body.since);
      if (!since)
        return logPage(reply, account, { status: 'failed' }, 400, null, {
          value: typeof request.body?.since === 'string' ? request.body.since.slice(0, 40) : '',
          error: 'Enter the date and time as YYYY-MM-DD HH:MM (UTC).',
        });
      try {
        const { resent } = await request.admin.run(
          resendFailedDeliveries,
          account.id,
          since,
          request.admin.actor,
          request.admin.now(),
        );
        const text =
          resent === 0
            ? `No failed delivery since ${formatTime(since)} is left to send again (none failed, or a resend made at the same time took them).`
            : `${resent === 1 ? '1 failed delivery' : `${resent} failed deliveries`} since ${formatTime(since)} will be sent again in a moment.`;
        return reply.seeOther(logHref(place.base(account.id), {}), { kind: 'ok', text });
      } catch (error) {
        if (!(error instanceof AdminError)) throw error;
        return logPage(reply, account, { status: 'failed' }, 400, await resendProblem(request, account.id, error));
      }
    },
  );
}
