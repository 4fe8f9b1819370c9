// The voice-agent runtime's two operations on the call it was handed (docs/agent-runtime.md): read the call's context
// and post what happened. Authenticated per call by the context token the hand-off carried, never by an API key
// (plugins/context-token-auth.ts, in the scope src/app.ts gives these routes, with a rate limit per call).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ResultBody, RESULT_BODY_MAX_BYTES } from '../../../schemas/agent-runtime.js';
import { addToDoNotCall } from '../../admin/do-not-call.js';
import { planResult, tokenStillValid } from '../../calls/runtime-result.js';
import { hasRepeatedKey, memberText, RawJson, stringifyWithRaw } from '../../domain/raw-json.js';
import { AppError } from '../../errors.js';

export interface RuntimeRoutesOptions {
  /** AGENT_RESULT_WAIT_SECONDS in milliseconds. */
  resultWaitMs: number;
}

/** The reason the callee's number is listed when they asked during the call. */
export const OPT_OUT_REASON = 'Asked during the call';

const CallParams = Type.Object({ call_id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

const runtimeCalls: FastifyPluginAsyncTypebox<RuntimeRoutesOptions> = async (fastify, options) => {
  // Fastify's own JSON parser (same limits, same __proto__ refusal), keeping the text: `data` is stored as written.
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    request.rawJsonBody = text as string;
    void parseJson(request, text as string, done);
  });

  fastify.get(
    '/calls/:call_id',
    // The answer is RuntimeContext (schemas/agent-runtime.ts), written by hand: metadata goes out as stored.
    { schema: { params: CallParams, hide: true } },
    async (request, reply) => {
      const claims = request.runtimeClaims!;
      const now = fastify.now();
      const call = await fastify.storage.results.contextOf(claims.callId);
      if (!call || !tokenStillValid(call, claims.attempt, now)) throw await fastify.failedAuth.refusal(request.ip);
      const context = {
        call_id: call.id,
        agent_id: call.agentId,
        agent_name: call.agentName,
        account_id: call.accountId,
        from_number: call.fromNumber,
        to_number: call.phoneNumber,
        attempt: call.attempt,
        name: call.name,
        email: call.email,
        metadata: new RawJson(call.metadata),
        scheduled_at: call.scheduledAt?.toISOString() ?? null,
        timezone: call.timezone,
      };
      // Written as stored, key order included: a string is sent as it is, past the response schema's serializer.
      return reply.type('application/json; charset=utf-8').send(stringifyWithRaw(context));
    },
  );

  fastify.post(
    '/calls/:call_id/result',
    {
      schema: {
        // Not in the integrators' OpenAPI document: the runtime's contract is docs/agent-runtime.md, with its JSON
        // Schemas beside the others (openapi/schemas/RuntimeContext.json, RuntimeResult.json).
        hide: true,
        params: CallParams,
        body: ResultBody,
        response: { 200: Type.Object({ success: Type.Literal(true) }, { additionalProperties: false }) },
      },
      bodyLimit: RESULT_BODY_MAX_BYTES,
    },
    async (request) => {
      const claims = request.runtimeClaims!;
      const dataJson =
        request.body.data && request.rawJsonBody ? (memberText(request.rawJsonBody, 'data') ?? null) : null;
      // JSON.parse keeps the last of a repeated key, so only that one was validated: the text would carry the others.
      if (dataJson !== null && hasRepeatedKey(dataJson))
        throw new AppError('VALIDATION', { detail: 'data must not repeat a key' });
      const now = fastify.now();
      const verdict = await fastify.storage.results.record(claims.callId, now, (call) =>
        planResult(call, {
          attempt: claims.attempt,
          posted: { body: request.body, dataJson },
          now,
          waitMs: options.resultWaitMs,
        }),
      );
      if (verdict.kind === 'invalid') throw await fastify.failedAuth.refusal(request.ip);
      if (verdict.kind === 'conflict') throw new AppError('RESULT_ALREADY_DELIVERED');
      // Again on a repeat: a crash after the result was stored and before the number was listed is mended by the
      // runtime's retry, as listing a listed number changes nothing.
      if (verdict.optOut) await optOut(claims.callId, now);
      return { success: true as const };
    },
  );

  /** The callee asked never to be called again: their number on the account's list, its waiting calls ended. */
  async function optOut(callId: string, now: Date) {
    const call = await fastify.storage.results.contextOf(callId);
    if (!call) return;
    await addToDoNotCall(fastify.storage, {
      accountId: call.accountId,
      phoneNumber: call.phoneNumber,
      reason: OPT_OUT_REASON,
      actor: { kind: 'agent' },
      now,
    });
  }
};

export default runtimeCalls;
