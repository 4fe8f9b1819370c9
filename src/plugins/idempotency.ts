// Idempotency-Key: the first response to a key is kept 24 h per account. A repeat with the same body gets it again
// (Idempotent-Replayed: true); with another body, 422; while the first is still in flight, 409. The reservation is a
// committed row, so concurrent duplicates see it; the response is stored in the transaction that accepts the call.
import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { stableStringify } from '../domain/stable-json.js';
import { AppError } from '../errors.js';
import type { AcceptTransaction } from '../calls/accept-call.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A reservation this old without a response belongs to a crashed request: the key may be used again. */
export const ABANDONED_AFTER_MS = 60_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyReservation {
  recordId: string;
  completed: boolean;
  /** Stores the response inside the caller's transaction, so call and record commit together. */
  complete(tx: AcceptTransaction, status: number, body: unknown): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyReservation | null;
  }
}

interface RecordRow { id: string; request_hash: string; response_status: number | null; response_body: unknown }

export default fp(
  async (fastify) => {
    fastify.decorateRequest('idempotency', null);

    fastify.addHook('preHandler', async (request, reply) => {
      const header = request.headers['idempotency-key'];
      if (header === undefined || !request.principal) return;
      const key = Array.isArray(header) ? header[0] ?? '' : header;
      if (!KEY_SHAPE.test(key)) throw new AppError('IDEMPOTENCY_KEY_INVALID');

      const accountId = request.principal.accountId;
      const hash = createHash('sha256').update(stableStringify(request.body ?? null)).digest('hex');
      const now = fastify.now();
      const reserved = await fastify.prisma.$queryRaw<{ id: string }[]>`
        INSERT INTO idempotency_records (id, account_id, key, request_hash, created_at, expires_at)
        VALUES (gen_random_uuid(), ${accountId}::uuid, ${key}, ${hash}, ${now}, ${new Date(now.getTime() + IDEMPOTENCY_TTL_MS)})
        ON CONFLICT (account_id, key) DO UPDATE
          SET id = EXCLUDED.id, request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL,
              created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
          WHERE idempotency_records.expires_at <= ${now}
             OR (idempotency_records.response_status IS NULL
                 AND idempotency_records.created_at < ${new Date(now.getTime() - ABANDONED_AFTER_MS)})
        RETURNING id`;
      const mine = reserved[0];
      if (mine) {
        request.idempotency = {
          recordId: mine.id,
          completed: false,
          async complete(tx, status, body) {
            // Exactly one row: a reservation taken over meanwhile (abandoned after 60 s) rolls the acceptance back.
            tx.query('UPDATE idempotency_records SET response_status = $1, response_body = $2::jsonb WHERE id = $3::uuid', [status, JSON.stringify(body), mine.id], 1);
            this.completed = true;
          },
        };
        return;
      }

      const [existing] = await fastify.prisma.$queryRaw<RecordRow[]>`
        SELECT id, request_hash, response_status, response_body FROM idempotency_records
         WHERE account_id = ${accountId}::uuid AND key = ${key}`;
      if (!existing) throw new AppError('IDEMPOTENCY_IN_FLIGHT'); // removed between our two statements: retryable
      if (existing.request_hash !== hash) throw new AppError('IDEMPOTENCY_KEY_REUSED');
      if (existing.response_status === null) throw new AppError('IDEMPOTENCY_IN_FLIGHT');
      return reply.code(existing.response_status).header('idempotent-replayed', 'true').send(existing.response_body);
    });

    // Only accepted requests are remembered: a refused one changed nothing, so the same key may be tried again.
    // Released before the response leaves (onSend), so an immediate retry never sees it in flight. An error after
    // complete() means its transaction rolled back; the delete only matches a reservation without a response.
    fastify.addHook('onSend', async (request, reply) => {
      const reservation = request.idempotency;
      if (!reservation || (reservation.completed && reply.statusCode < 400)) return;
      await fastify.prisma.idempotencyRecord
        .deleteMany({ where: { id: reservation.recordId, responseStatus: null } })
        .catch((error: Error) => request.log.warn({ err: error }, 'could not release idempotency reservation'));
    });
  },
  { name: 'idempotency', fastify: '5.x', dependencies: ['db', 'auth'] },
);
