// POST /api/v1/calls/trigger: the one public operation. Checks before the handler live in their plugins.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { acceptCall } from '../../../../calls/accept-call.js';
import { Type } from '@sinclair/typebox';
import { triggerResponses } from '../../../../schemas/responses.js';
import { TriggerBody, TriggerHeaders, TriggerResponse } from '../../../../schemas/trigger.js';

const trigger: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/calls/trigger',
    {
      schema: {
        summary: 'Trigger an outbound call',
        description: 'Places an outbound call by a voice agent to phone_number. A 200 means the call is durably stored and will end in exactly one terminal webhook event.',
        operationId: 'triggerCall',
        tags: ['calls'],
        headers: TriggerHeaders,
        body: TriggerBody,
        security: [{ bearerAuth: [] }],
        response: triggerResponses(Type.Ref(TriggerResponse)),
      },
    },
    async (request) => {
      const { config } = fastify;
      const { callId } = await acceptCall(fastify.prisma, {
        principal: request.principal!,
        body: request.body,
        now: fastify.now(),
        limits: { maxQueuedCalls: config.MAX_QUEUED_CALLS, queuedCallTtlHours: config.QUEUED_CALL_TTL_HOURS },
        inTransaction: async (tx, id) => {
          await request.idempotency?.complete(tx, 200, { success: true, call_id: id, status: 'initiated' });
        },
      });
      fastify.wakeDispatchers();
      return { success: true as const, call_id: callId, status: 'initiated' as const };
    },
  );
};

export default trigger;
