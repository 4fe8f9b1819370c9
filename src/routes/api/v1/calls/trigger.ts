// POST /api/v1/calls/trigger: the one public operation. Checks before the handler live in their plugins.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { acceptCall, acceptedResponse } from '../../../../calls/accept-call.js';
import { Type } from '@sinclair/typebox';
import { hasRepeatedKey, memberText } from '../../../../domain/raw-json.js';
import { AppError } from '../../../../errors.js';
import { triggerResponses } from '../../../../../schemas/responses.js';
import { TriggerBody, TriggerHeaders, TriggerResponse } from '../../../../../schemas/trigger.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body's text as received (this route's metadata is stored as written, key order included). */
    rawJsonBody?: string;
  }
}

const trigger: FastifyPluginAsyncTypebox = async (fastify) => {
  // Fastify's own JSON parser (same limits, same __proto__ refusal), keeping the text it parsed.
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    request.rawJsonBody = text as string;
    // Synchronous: it answers through done (its type also allows a promise, which it never returns).
    void parseJson(request, text as string, done);
  });

  fastify.post(
    '/calls/trigger',
    {
      schema: {
        summary: 'Trigger an outbound call',
        description:
          'Places an outbound call by a voice agent to phone_number. A 200 means the call is durably stored and will end in exactly one terminal webhook event.',
        operationId: 'triggerCall',
        tags: ['calls'],
        headers: TriggerHeaders,
        body: TriggerBody,
        security: [{ bearerAuth: [] }],
        response: triggerResponses(Type.Ref(TriggerResponse)),
      },
    },
    async (request) => {
      const metadataJson =
        request.body.metadata && request.rawJsonBody ? memberText(request.rawJsonBody, 'metadata')! : '{}';
      // JSON.parse keeps the last of a repeated key, so only that one was validated: the text would carry the others.
      if (metadataJson !== '{}' && hasRepeatedKey(metadataJson))
        throw new AppError('VALIDATION', { detail: 'metadata must not repeat a key' });
      const { callId } = await acceptCall(fastify.storage, {
        principal: request.principal!,
        body: request.body,
        metadataJson,
        now: fastify.now(),
        limits: fastify.concurrency.limits,
        idempotencyRecordId: request.idempotency?.recordId,
      });
      if (request.idempotency) request.idempotency.completed = true;
      fastify.wakeDispatchers(request.principal!.accountId);
      return acceptedResponse(callId);
    },
  );
};

export default trigger;
