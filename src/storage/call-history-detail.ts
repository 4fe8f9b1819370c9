// One call as the dashboard's detail shows it (its account, agent, events, deliveries and their attempts, its
// metadata as written), and the list's per-call extras: one metadata key's value, a waiting call's place in line.
// Prisma Client for the detail; hand-written where Prisma would reorder the JSON or has no subquery (each says which).
import type { Call } from '../generated/prisma/client.js';
import type { CallStatus, DeliveryStatus, FailureReason } from '../../schemas/vocabulary.js';
import { PoolRepository } from './driver.js';
import { statement } from './statements.js';

// Hand-written: one metadata key's value of each call (jsonb: the last of duplicate keys, as the search reads them).
const METADATA_VALUES = statement(
  'oct_call_history_metadata_values',
  'SELECT id, (metadata::jsonb) -> $2::text AS value FROM calls WHERE id = ANY($1::uuid[])',
);

// Hand-written: where each waiting call stands in its account's line (the dispatcher's order: oldest due first, see
// call-claims.ts): 1 + the due calls of the account before it. The line is bounded (MAX_QUEUED_CALLS per account).
const QUEUE_POSITIONS = statement(
  'oct_call_history_queue_positions',
  `SELECT w.id, 1 + (SELECT count(*) FROM calls q
                      WHERE q.account_id = w.account_id AND q.status = 'initiated' AND q.not_before <= $2::timestamptz
                        AND q.expires_at > $2::timestamptz AND (q.created_at, q.id) < (w.created_at, w.id))::int AS position
     FROM calls w WHERE w.id = ANY($1::uuid[])`,
);

// Hand-written: the metadata's text as stored (`json` keeps the client's key order); Prisma Client parses it into an
// object, which moves integer-like keys ("2", "10") first.
const METADATA_TEXT = statement(
  'oct_call_history_metadata',
  'SELECT metadata::text AS metadata FROM calls WHERE id = $1::uuid',
);

/** A call with everything its detail view shows; `metadata` is its JSON text as the client wrote it. */
export type CallDetail = Omit<Call, 'metadata'> & {
  metadata: string;
  account: { id: string; name: string; kind: 'agency' | 'client'; agencyId: string | null };
  /** The client the call is listed for besides its account (an agency's key on that client's agent), else null. */
  listedFor: { id: string; name: string; kind: 'agency' | 'client'; agencyId: string | null } | null;
  agent: { id: string; name: string };
  events: {
    id: string;
    fromStatus: CallStatus | null;
    toStatus: CallStatus;
    failureReason: FailureReason | null;
    source: string;
    occurredAt: Date;
  }[];
  deliveries: {
    id: string;
    callEventId: string;
    eventType: string;
    status: DeliveryStatus;
    /** Why it is held (status held), else null. */
    heldReason: string | null;
    attemptCount: number;
    nextAttemptAt: Date;
    createdAt: Date;
    endpointId: string;
    attempts: {
      id: string;
      attemptNumber: number;
      startedAt: Date;
      durationMs: number;
      responseStatus: number | null;
      error: string | null;
    }[];
  }[];
};

export class CallDetailReads extends PoolRepository {
  /** The value of one metadata key of each of the calls `ids` (absent keys left out), as JSON values. */
  async metadataValues(ids: string[], key: string): Promise<Map<string, unknown>> {
    if (ids.length === 0) return new Map();
    const { rows } = await this.pool.query<{ id: string; value: unknown }>({ ...METADATA_VALUES, values: [ids, key] });
    return new Map(rows.filter((r) => r.value !== null).map((r) => [r.id, r.value]));
  }

  /**
   * For each of the calls `ids` that waits for a free slot at `now` (due, not yet dialled), its place in its
   * account's line: 1 is dialled next. Calls that are not waiting get a number too; callers ask only for due ones.
   */
  async queuePositions(ids: string[], now: Date): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const { rows } = await this.pool.query<{ id: string; position: number }>({
      ...QUEUE_POSITIONS,
      values: [ids, now],
    });
    return new Map(rows.map((r) => [r.id, r.position]));
  }

  /** One call with its account, agent, events (oldest first), deliveries and their attempts; null when none. */
  async findCallDetail(callId: string): Promise<CallDetail | null> {
    const [call, text] = await Promise.all([
      this.prisma.call.findUnique({
        where: { id: callId },
        omit: { metadata: true },
        include: {
          account: { select: { id: true, name: true, kind: true, agencyId: true } },
          agent: { select: { id: true, name: true } },
          events: { orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] },
          deliveries: {
            orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
            select: {
              id: true,
              callEventId: true,
              eventType: true,
              status: true,
              heldReason: true,
              attemptCount: true,
              nextAttemptAt: true,
              createdAt: true,
              endpointId: true,
              attempts: {
                orderBy: { attemptNumber: 'asc' },
                select: {
                  id: true,
                  attemptNumber: true,
                  startedAt: true,
                  durationMs: true,
                  responseStatus: true,
                  error: true,
                },
              },
            },
          },
        },
      }),
      this.pool.query<{ metadata: string }>({ ...METADATA_TEXT, values: [callId] }),
    ]);
    if (!call) return null;
    // Read only for a listed call (no relation: calls.listed_for_account_id has no foreign key, as agency_id).
    const listedFor = call.listedForAccountId
      ? await this.prisma.account.findUnique({
          where: { id: call.listedForAccountId },
          select: { id: true, name: true, kind: true, agencyId: true },
        })
      : null;
    return { ...call, listedFor, metadata: text.rows[0]?.metadata ?? '{}' };
  }
}
