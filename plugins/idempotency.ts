// Idempotency-Key: the first response to a key is kept 24 h per account. A repeat with the same body gets it again
// (Idempotent-Replayed: true); with another body, 422; while the first is still in flight, 409. The reservation is a
// committed row, so concurrent duplicates see it; the response is stored by the statement that accepts the call.
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { stableStringify } from '../src/domain/stable-json.js';
import { AppError } from '../src/errors.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A reservation this old without a response belongs to a crashed request: the key may be used again. */
export const ABANDONED_AFTER_MS = 60_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyReservation {
  /** The reservation's row: the acceptance stores its response there, in the statement that stores the call. */
  recordId: string;
  /** Set once the response is stored (the acceptance committed). */
  completed: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyReservation | null;
  }
}

export default fp(
  async (fastify) => {
    fastify.decorateRequest('idempotency', null);

    fastify.addHook('preHandler', async (request, reply) => {
      const header = request.headers['idempotency-key'];
      if (header === undefined || !request.principal) return;
      const key = Array.isArray(header) ? (header[0] ?? '') : header;
      if (!KEY_SHAPE.test(key)) throw new AppError('IDEMPOTENCY_KEY_INVALID');

      const accountId = request.principal.accountId;
      const hash = createHash('sha256')
        .update(stableStringify(request.body ?? null))
        .digest('hex');
      const now = fastify.now();
      const recordId = await fastify.storage.idempotency.reserveIdempotencyKey({
        accountId,
        key,
        requestHash: hash,
        now,
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        abandonedBefore: new Date(now.getTime() - ABANDONED_AFTER_MS),
      });
      if (recordId) {
        request.idempotency = { recordId, completed: false };
        return;
      }

      const existing = await fastify.storage.idempotency.findIdempotencyRecord(accountId, key);
      if (!existing) throw new AppError('IDEMPOTENCY_IN_FLIGHT'); // removed between our two statements: retryable
      if (existing.requestHash !== hash) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      if (existing.responseStatus === null) throw new AppError('IDEMPOTENCY_IN_FLIGHT');
      return reply.code(existing.responseStatus).header('idempotent-replayed', 'true').send(existing.responseBody);
    });

    // Only accepted requests are remembered: a refused one changed nothing, so the same key may be tried again.
    // Released before the response leaves (onSend), so an immediate retry never sees it in flight. An error after the
    // acceptance means its statement rolled back; the delete only matches a reservation without a response.
    fastify.addHook('onSend', async (request, reply) => {
      const reservation = request.idempotency;
      if (!reservation || (reservation.completed && reply.statusCode < 400)) return;
      await fastify.storage.idempotency
        .releaseIdempotencyReservation(reservation.recordId)
        .catch((error: Error) => request.log.warn({ err: error }, 'could not release idempotency reservation'));
    });
  },
  { name: 'idempotency', fastify: '5.x', dependencies: ['config', 'db', 'bearer-auth'] },
);
