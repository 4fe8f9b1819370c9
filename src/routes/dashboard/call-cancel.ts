// Cancelling calls that still wait: "Cancel this call" on a call's detail view, and "Cancel selected calls" on the
// Calls list. Both go through src/admin/calls.ts's cancelCalls (callctl's `calls cancel` too), which decides under the
// calls' row locks: a call the dispatcher claimed meanwhile is found dialling and is not cancelled, and the notice says
// so. Registered inside the calls family, so `:id` is a call of an account the viewer manages (else 404); the list's
// form is refused as a whole (404, nothing cancelled) when it names a call that is not one of those.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { cancelCalls } from '../../admin/calls.js';
import type { Actor } from '../../admin/audit.js';
import { CallParams, CancelCallForm, CancelCallsForm } from '../../../schemas/dashboard/calls.js';
import { canonicalUuid } from '../../../schemas/uuid.js';
import { clientIp, formProblem, refusals } from './form-problem.js';
import { cancelManyNotice, cancelNotice } from './format.js';

const actorOf = (request: FastifyRequest): Actor => ({ kind: 'user', userId: request.user.id, ip: clientIp(request) });

export default async function callCancel(fastify: FastifyInstance) {
  fastify.post<{ Params: CallParams; Body: CancelCallForm }>(
    '/calls/:id/cancel',
    { schema: { hide: true, params: CallParams, body: CancelCallForm }, attachValidation: true },
    async (request, reply) => {
      const call = request.managed('call');
      const problem = formProblem(request);
      if (problem) return reply.code(400).page('error', { title: 'Cancel a call', message: problem });
      const [outcome] = await cancelCalls(fastify.storage, [call.id], actorOf(request), fastify.now());
      return reply.seeOther(`/dashboard/calls/${call.id}`, cancelNotice(outcome!.result, outcome!.status));
    },
  );

  fastify.post<{ Body: CancelCallsForm }>(
    '/calls/cancel',
    { schema: { hide: true, body: CancelCallsForm }, attachValidation: true },
    async (request, reply) => {
      const refused = refusals(request, CancelCallsForm, request.body);
      if (!refused) return reply.code(400).page('error', { title: 'Cancel calls', message: formProblem(request)! });
      // A call id the schema refused (not an id) is no call of the viewer's: a 404, like another tenant's.
      if (refused.length > 0) throw fastify.httpErrors.notFound();
      const named = request.body.call ?? [];
      const ids = [...new Set((typeof named === 'string' ? [named] : named).map(canonicalUuid))];
      const managed = await fastify.storage.scoped.findCallsInScope(request.scope, ids);
      if (managed.length !== ids.length) throw fastify.httpErrors.notFound();
      const outcomes = await cancelCalls(fastify.storage, ids, actorOf(request), fastify.now());
      const count = (result: string) => outcomes.filter((o) => o.result === result).length;
      return reply.seeOther(
        '/dashboard/calls',
        cancelManyNotice({
          canceled: count('canceled'),
          already: count('already_canceled'),
          tooLate: count('too_late'),
        }),
      );
    },
  );
}
