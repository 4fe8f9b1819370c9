// Do-not-call list: the numbers an account's calls must never ring, for the viewer's own account (/dashboard/do-not-call)
// and, for agency users, each client's (/dashboard/clients/:id/do-not-call): one set of routes, registered twice. An
// agency's list covers the agency and all its clients. The list in number order, 50 a page (keyset), searched by a
// number's beginning or a reason's words; add a number with a reason (also from a call's detail view; written as
// people do, stored in E.164), remove one, import a CSV file (do-not-call-import.ts: streamed), export the list as
// CSV (streamed). Every change goes through src/admin, as callctl's do, which audits it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { addToDoNotCall, removeFromDoNotCall } from '../../admin/do-not-call.js';
import { exportCsv } from '../../domain/do-not-call-csv.js';
import type { AccountInScope } from '../../storage/index.js';
import { AddDoNotCallForm, DoNotCallQuery, RemoveDoNotCallForm } from '../../../schemas/dashboard/do-not-call.js';
import { canonicalUuid } from '../../../schemas/uuid.js';
import { importRoute } from './do-not-call-import.js';
import { CLIENT_LIST, listPage, OWN_LIST, type ListPlace, type PageInput } from '../../views/pages/do-not-call.js';

/** A file name for the export: the account's name in plain letters and digits (its id when it has none). */
function exportName(account: AccountInScope): string {
  const slug = account.name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `do-not-call-${slug || account.id}.csv`;
}

function routesOf(place: ListPlace): FastifyPluginAsyncTypebox {
  return async function doNotCall(fastify) {
    // The list's account: the viewer's own, or the client named by `:id` (else 404).
    fastify.resolveManaged(place.managed, place.param);
    const accountOf = (request: FastifyRequest) => request.managed(place.managed);
    const render = async (request: FastifyRequest, reply: FastifyReply, status: number, input: PageInput) =>
      reply.code(status).page('do-not-call', await listPage(request, accountOf(request), input));

    fastify.get(
      place.prefix,
      { config: { role: 'viewer' }, schema: { hide: true, querystring: DoNotCallQuery }, attachValidation: true },
      async (request, reply) =>
        request.validationError
          ? render(request, reply, 400, {})
          : render(request, reply, 200, { query: request.query }),
    );

    fastify.post(
      `${place.prefix}/add`,
      {
        schema: { hide: true, body: AddDoNotCallForm },
        attachValidation: true,
        config: {
          role: 'member',
          formFailure: (request, reply, { message, invalid }) => {
            if (invalid) return render(request, reply, 400, { add: { phoneNumber: '', reason: '', problem: message } });
            const { phone_number: written, reason = '', call } = request.body as AddDoNotCallForm;
            // From a call's detail view: back there (the call is the viewer's: they were shown its button).
            if (call)
              return reply.seeOther(`/dashboard/calls/${canonicalUuid(call)}`, { kind: 'error', text: `${message}.` });
            return render(request, reply, 400, { add: { phoneNumber: written, reason, problem: `${message}.` } });
          },
        },
      },
      async (request, reply) => {
        const account = accountOf(request);
        const base = place.base(account.id);
        const { phone_number: written, reason = '', call } = request.body;
        const back = call ? `/dashboard/calls/${canonicalUuid(call)}` : null;
        const {
          added,
          phone_number: phoneNumber,
          waiting_calls_ended: ended,
        } = await request.admin.run(addToDoNotCall, {
          accountId: account.id,
          phoneNumber: written,
          reason,
          actor: request.admin.actor,
          now: request.admin.now(),
        });
        const list =
          account.kind === 'agency' ? "the agency's do-not-call list" : `the do-not-call list of ${account.name}`;
        const waiting =
          ended === 0
            ? 'no call to it was waiting'
            : `${ended === 1 ? '1 call' : `${ended} calls`} to it that waited ended failed (do-not-call)`;
        const text = added
          ? `${phoneNumber} is on ${list}: triggers to it are refused, and ${waiting}.`
          : `${phoneNumber} was already on ${list}: its entry is unchanged.`;
        return reply.seeOther(back ?? `${base}?q=${encodeURIComponent(phoneNumber)}`, { kind: 'ok', text });
      },
    );

    fastify.post(
      `${place.prefix}/remove`,
      {
        schema: { hide: true, body: RemoveDoNotCallForm },
        attachValidation: true,
        config: {
          role: 'member',
          formFailure: (request, reply, { message, invalid, error }) => {
            if (!invalid) throw error;
            return render(request, reply, 400, { add: { phoneNumber: '', reason: '', problem: message } });
          },
        },
      },
      async (request, reply) => {
        const account = accountOf(request);
        const { phone_number: phoneNumber, q } = request.body;
        const { removed } = await request.admin.run(removeFromDoNotCall, {
          accountId: account.id,
          phoneNumber,
          actor: request.admin.actor,
          now: request.admin.now(),
        });
        const text = removed
          ? `${phoneNumber} is no longer on the list: triggers to it are accepted again (unless another list covers it).`
          : `${phoneNumber} was not on the list: nothing changed.`;
        const search = q?.trim() ? `?q=${encodeURIComponent(q.trim())}` : '';
        return reply.seeOther(`${place.base(account.id)}${search}`, { kind: 'ok', text });
      },
    );

    importRoute(fastify, place, render);

    fastify.get(
      `${place.prefix}/export.csv`,
      { config: { role: 'viewer' }, schema: { hide: true } },
      async (request, reply) => {
        const account = accountOf(request);
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${exportName(account)}"`)
          .header('cache-control', 'no-store')
          .send(exportCsv(request.scoped.eachDoNotCall(account)));
      },
    );
  };
}

/** The viewer's own account's list: in the signed-in family. */
export const ownDoNotCall = routesOf(OWN_LIST);
/** A client's list: in the agency-only family. */
export const clientDoNotCall = routesOf(CLIENT_LIST);
