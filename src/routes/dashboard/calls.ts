// Calls: the calls of the accounts the viewer manages, newest first, filtered, 50 a page (keyset: "Older" carries the
// last call's time and id), and one call's detail: its timeline, metadata as given, webhook deliveries and their
// attempts. "Resend" posts to the delivery log's action (api-webhooks/deliveries.ts) of the call's account.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LIVE_STATUSES, type CallStatus } from '../../../schemas/vocabulary.js';
import { METADATA_KEY_MAX } from '../../../schemas/trigger.js';
import { CallParams, CallsColumnForm, CallsQuery } from '../../../schemas/dashboard/calls.js';
import callCancel from './call-cancel.js';
import { callsListPage } from '../../views/pages/calls-list.js';
import { callPage } from '../../views/pages/call.js';
import { callDoNotCall } from '../../views/pages/do-not-call.js';

/** How long after a call completed its page refreshes itself while the runtime's result has not come. */
const RESULT_WATCH_MS = 2 * 60_000;

/** "Show as a column": remembers the metadata key (blank: none) and goes back to the list as it was filtered. */
async function saveColumn(request: FastifyRequest, body: CallsColumnForm, reply: FastifyReply) {
  // Re-serialized: whatever was posted, the redirect stays on the Calls list.
  const back = new URLSearchParams(body.back ?? '');
  back.delete('before');
  const to = `/dashboard/calls${back.size ? `?${back.toString()}` : ''}`;
  const key = body.column.trim();
  if ([...key].length > METADATA_KEY_MAX)
    return reply.seeOther(to, {
      kind: 'error',
      text: `"${key}" is not a metadata key: a key has at most ${METADATA_KEY_MAX} characters. The column was not changed.`,
    });
  await request.scoped.saveCallsColumn(key || null);
  return reply.seeOther(
    to,
    key
      ? { kind: 'ok', text: `The metadata key "${key}" is shown as a column.` }
      : { kind: 'ok', text: 'No metadata column is shown.' },
  );
}

const calls: FastifyPluginAsyncTypebox = async (fastify) => {
  // `/calls/:id`: a call of an account the viewer manages, else 404 (no such call, not an id, another tenant's).
  fastify.resolveManaged('call', 'id');
  await fastify.register(callCancel);

  fastify.get(
    '/calls',
    { config: { role: 'viewer' }, schema: { hide: true, querystring: CallsQuery }, attachValidation: true },
    async (request, reply) => {
      const { status, model } = await callsListPage(request, request.query);
      return reply.code(status).page('calls', model);
    },
  );

  fastify.post(
    '/calls/column',
    {
      schema: { hide: true, body: CallsColumnForm },
      attachValidation: true,
      config: {
        role: 'viewer',
        formFailure: (_request, reply, { message }) =>
          reply.code(400).page('error', { title: 'Metadata column', message }),
      },
    },
    async (request, reply) => saveColumn(request, request.body, reply),
  );

  fastify.get(
    '/calls/:id',
    // A malformed id is resolved like any unknown one: 404.
    { config: { role: 'viewer' }, schema: { hide: true, params: CallParams }, attachValidation: true },
    async (request, reply) => {
      const call = request.managed('call');
      const doNotCall = await callDoNotCall(request, call);
      // Live while the call is, and for a short while after it completed without the runtime's result yet: most
      // results come within seconds of the hang-up.
      const sinceEnd = call.endedAt ? request.admin.now().getTime() - call.endedAt.getTime() : -1;
      const awaitingResult = call.status === 'completed' && !call.result && sinceEnd >= 0 && sinceEnd < RESULT_WATCH_MS;
      const live = (LIVE_STATUSES as readonly CallStatus[]).includes(call.status) || awaitingResult;
      return reply.page('call', {
        ...callPage(request.user, call, request.admin.now(), doNotCall, request.times),
        live,
      });
    },
  );
};

export default calls;
