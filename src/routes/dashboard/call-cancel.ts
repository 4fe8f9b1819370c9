// Cancelling calls that still wait: "Cancel this call" on a call's detail view, and "Cancel selected calls" on the
// Calls list. Each asks first: the form's POST answers a confirmation page (how many calls, and that it cannot be
// undone), whose button posts again with confirm=yes; no script is needed, and both POSTs carry the CSRF token. Both
// go through src/admin/calls.ts's cancelCalls (callctl's `calls cancel` too), which decides under the calls' row
// locks: a call the dispatcher claimed meanwhile is found dialling and is not cancelled, and the notice says so.
// Registered inside the calls family, so `:id` is a call of an account the viewer manages (else 404); the list's
// form is refused as a whole (404, nothing cancelled) when it names a call that is not one of those. The list's form
// comes back to the list as it was filtered (its `back`, reduced to the list's own parameters).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { cancelCalls } from '../../admin/calls.js';
import {
  CallParams,
  CallsQuery,
  CancelCallForm,
  CancelCallsForm,
  FILTER_MAX_LENGTH,
} from '../../../schemas/dashboard/calls.js';
import { canonicalUuid } from '../../../schemas/uuid.js';
import { refusals } from '../../views/form-problem.js';
import { cancelManyNotice, cancelNotice } from '../../views/format/notices.js';

/** The Calls list's own query parameters (its filters and its page): all `back` may carry. */
const LIST_PARAMETERS = new Set(Object.keys(CallsQuery.properties));

/**
 * The Calls list's query string as the form left it: `back` reduced to the list's own parameters, each once and within
 * a filter's length, written anew. The way back is then always the list's own relative path with it: never another
 * page, never another site, whatever was posted.
 */
export function callsListQuery(back: string | undefined): string {
  const kept = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(back ?? ''))
    if (LIST_PARAMETERS.has(name) && !kept.has(name) && value.length <= FILTER_MAX_LENGTH) kept.append(name, value);
  return kept.toString();
}
const callsListHref = (query: string) => `/dashboard/calls${query ? `?${query}` : ''}`;

const callsWords = (n: number) => (n === 1 ? '1 call' : `${n} calls`);

const callCancel: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/calls/:id/cancel',
    {
      schema: { hide: true, params: CallParams, body: CancelCallForm },
      attachValidation: true,
      config: {
        role: 'member',
        formFailure: (_request, reply, { message, invalid, error }) => {
          if (!invalid) throw error;
          return reply.code(400).page('error', { title: 'Cancel a call', message });
        },
      },
    },
    async (request, reply) => {
      const call = request.managed('call');
      const back = `/dashboard/calls/${call.id}`;
      // A call no longer waiting has nothing to confirm: the cancel below changes nothing and the notice says why.
      if (request.body.confirm !== 'yes' && call.status === 'initiated')
        return reply.page('cancel-confirm', {
          title: `Cancel the call to ${call.phoneNumber}?`,
          action: `${back}/cancel`,
          callIds: [],
          back: null,
          consequence: 'It will never be dialled: it ends failed (canceled), and call.failed is sent to the webhook.',
          notWaiting: null,
          confirmLabel: 'Cancel the call',
          keepHref: back,
          keepLabel: 'Keep it waiting',
        });
      const [outcome] = await request.admin.run(cancelCalls, [call.id], request.admin.actor, request.admin.now());
      return reply.seeOther(back, cancelNotice(outcome!.result, outcome!.status));
    },
  );

  fastify.post(
    '/calls/cancel',
    {
      schema: { hide: true, body: CancelCallsForm },
      attachValidation: true,
      config: {
        role: 'member',
        formFailure: (request, reply, { message, invalid, error }) => {
          if (!invalid) throw error;
          // A call id the schema refused (not an id) is no call of the viewer's: a 404, like another tenant's.
          if (refusals(request, CancelCallsForm, request.body)) throw fastify.httpErrors.notFound();
          return reply.code(400).page('error', { title: 'Cancel calls', message });
        },
      },
    },
    async (request, reply) => {
      const query = callsListQuery(request.body.back);
      const list = callsListHref(query);
      const named = request.body.call ?? [];
      const ids = [...new Set((typeof named === 'string' ? [named] : named).map(canonicalUuid))];
      const managed = await request.scoped.findCallsInScope(ids);
      if (managed.length !== ids.length) throw fastify.httpErrors.notFound();
      const waiting = managed.filter((c) => c.status === 'initiated').map((c) => c.id);
      if (request.body.confirm !== 'yes' && waiting.length > 0) {
        const others = ids.length - waiting.length;
        return reply.page('cancel-confirm', {
          title: `Cancel ${callsWords(waiting.length)}?`,
          action: '/dashboard/calls/cancel',
          // Only the waiting ones go on: the page counts what the button cancels.
          callIds: waiting,
          back: query,
          consequence: `${waiting.length === 1 ? 'It' : `Each of the ${waiting.length}`} will never be dialled: ${
            waiting.length === 1 ? 'it ends' : 'each ends'
          } failed (canceled), and call.failed is sent to the webhook.`,
          notWaiting:
            others === 0
              ? null
              : `${callsWords(others)} of those ticked ${others === 1 ? 'is' : 'are'} no longer waiting (being dialled or ended): not canceled.`,
          confirmLabel: `Cancel ${callsWords(waiting.length)}`,
          keepHref: list,
          keepLabel: waiting.length === 1 ? 'Keep it waiting' : 'Keep them waiting',
        });
      }
      const outcomes = await request.admin.run(cancelCalls, ids, request.admin.actor, request.admin.now());
      const count = (result: string) => outcomes.filter((o) => o.result === result).length;
      return reply.seeOther(
        list,
        cancelManyNotice({
          canceled: count('canceled'),
          already: count('already_canceled'),
          tooLate: count('too_late'),
        }),
      );
    },
  );
};

export default callCancel;
