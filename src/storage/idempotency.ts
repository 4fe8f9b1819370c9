// The idempotency_records table's SQL: reserving a key, reading what it answered, releasing a reservation. Prisma
// Client, and the reservation's INSERT ... ON CONFLICT in SQL on the same client.
import { PrismaRepository } from './driver.js';

export interface IdempotencyRecord {
  id: string;
  requestHash: string;
  /** Null while the first request is in flight. */
  responseStatus: number | null;
  responseBody: unknown;
}

export class IdempotencyRepository extends PrismaRepository {
  /**
   * Reserves `key` for the account unless it is held: a free key, an expired record or a reservation abandoned before
   * `abandonedBefore` is (re)taken. Returns the reservation's id, or null when another request holds the key.
   * Hand-written: INSERT ... ON CONFLICT DO UPDATE ... WHERE has no Prisma equivalent (upsert cannot be conditional).
   */
  async reserveIdempotencyKey(reservation: {
    accountId: string;
    key: string;
    requestHash: string;
    now: Date;
    expiresAt: Date;
    abandonedBefore: Date;
  }): Promise<string | null> {
    const { accountId, key, requestHash, now, expiresAt, abandonedBefore } = reservation;
    const reserved = await this.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO idempotency_records (id, account_id, key, request_hash, created_at, expires_at)
      VALUES (gen_random_uuid(), ${accountId}::uuid, ${key}, ${requestHash}, ${now}, ${expiresAt})
      ON CONFLICT (account_id, key) DO UPDATE
        SET id = EXCLUDED.id, request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE idempotency_records.expires_at <= ${now}
           OR (idempotency_records.response_status IS NULL AND idempotency_records.created_at < ${abandonedBefore})
      RETURNING id`;
    return reserved[0]?.id ?? null;
  }

  /** The record held for `key`, or null (it was released between the caller's two statements). */
  async findIdempotencyRecord(accountId: string, key: string): Promise<IdempotencyRecord | null> {
    return this.prisma.idempotencyRecord.findUnique({
      where: { accountId_key: { accountId, key } },
      select: { id: true, requestHash: true, responseStatus: true, responseBody: true },
    });
  }

  /** Releases a reservation that got no response (the request was refused or failed); a completed one stays. */
  async releaseIdempotencyReservation(recordId: string): Promise<void> {
    await this.prisma.idempotencyRecord.deleteMany({ where: { id: recordId, responseStatus: null } });
  }
}
