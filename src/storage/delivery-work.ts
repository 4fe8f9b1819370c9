// The webhook worker's side of the deliveries, prepared on the pool: its claims, releases and attempt records, and
// the holds of deliveries whose endpoint is disabled. Hand-written: the worker's hot path, and locks Prisma cannot
// express (each statement says which).
import type pg from 'pg';
import type { AuditAction } from '../domain/audit-actions.js';
import type { DeliveryStatus } from '../../schemas/vocabulary.js';
import { DeliveryRepository, heldReason } from './deliveries.js';
import type { PoolDriver } from './driver.js';
import { SECRET_PLACES, type SecretVault } from './secrets.js';
import { statement } from './statements.js';

/** A due delivery leased to one worker, with where and how to send it. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  /** The body frozen when the event happened. */
  payload: string;
  attemptCount: number;
  url: string;
  /** The signing secret in clear; empty when the stored one does not open with this process's keys (it cannot sign). */
  secret: string;
  enabled: boolean;
}

/** A claimed delivery as read: its endpoint's account names the place its secret is sealed for. */
export type ClaimedDeliveryRow = ClaimedDelivery & { accountId: string };

/**
 * The rows with their secrets opened (a cached open: the worker's every delivery). One that does not open fails its
 * own attempt, never the claim of the others.
 */
export function openClaimed(rows: readonly ClaimedDeliveryRow[], secrets: SecretVault): ClaimedDelivery[] {
  return rows.map(({ accountId, ...delivery }) => {
    let secret = '';
    try {
      secret = secrets.open(delivery.secret, SECRET_PLACES.webhookSecret(accountId));
    } catch {
      // Left empty: the sender records "cannot sign" for this attempt and retries it on schedule.
    }
    return { ...delivery, secret };
  });
}

// Hand-written: the worker's every pass; one statement ranks, caps per endpoint and leases (Prisma would need a read
// and an update per row). Two workers may pick the same rows: the second skips those the first has locked (SKIP
// LOCKED in a step of its own, as the ranking's window function cannot lock) instead of waiting for its commit, and
// leases only those still pending and unleased as the lock finds them (the row's latest version, which a lock reads
// in READ COMMITTED): any the first leased and committed meanwhile are left alone. The UPDATE reaches its rows by id
// alone: with a history of finished deliveries the planner takes `status = 'pending'` for a row or two, and given
// that condition it read all pending deliveries per delivery leased: docs/performance.md#the-webhook-claim. An endpoint
// with attempts in flight here gets only the rest of its cap ($6, $7), so two events written between passes cannot
// take it over the cap. $8 bounds the index range from below: every delivery sent leaves a dead entry at the low
// end of the pending part of (status, next_attempt_at) until vacuum, so a claim woken for new deliveries reads only
// the recent end. The window and the ranks follow one order, ties broken by id: ranked among equals in another order
// (deliveries written by one transaction share their times), an endpoint's first ranks could fall outside the window,
// and a claim took nothing for it while its deliveries were due.
const CLAIM_DELIVERIES = statement(
  'oct_claim_deliveries',
  `
  WITH in_flight AS (
    SELECT * FROM unnest($6::uuid[], $7::int[]) AS f(endpoint_id, n)
  ), due AS (
    SELECT ranked.id FROM (
      SELECT d.id, d.endpoint_id, row_number() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.created_at, d.id) AS rank
        FROM webhook_deliveries d
       WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND d.next_attempt_at >= $8
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at < $1)
         AND NOT (d.endpoint_id = ANY($2::uuid[]))
       ORDER BY d.next_attempt_at, d.created_at, d.id LIMIT 1000
    ) ranked
    LEFT JOIN in_flight f ON f.endpoint_id = ranked.endpoint_id
     WHERE ranked.rank <= $3 - COALESCE(f.n, 0)
     LIMIT $4
  ), locked AS (
    SELECT d.id, d.status, d.lease_expires_at FROM webhook_deliveries d
     WHERE d.id = ANY(ARRAY(SELECT id FROM due)) FOR UPDATE SKIP LOCKED
  )
  UPDATE webhook_deliveries d SET lease_expires_at = $5
    FROM locked l, webhook_endpoints e
   WHERE d.id = l.id AND e.id = d.endpoint_id AND l.status = 'pending'
     AND (l.lease_expires_at IS NULL OR l.lease_expires_at < $1)
  RETURNING d.id, d.endpoint_id AS "endpointId", d.payload, d.attempt_count AS "attemptCount", e.url, e.secret, e.enabled,
            e.account_id AS "accountId"`,
  { planEachTime: true },
);

const RELEASE = statement(
  'oct_release_deliveries',
  `UPDATE webhook_deliveries SET lease_expires_at = NULL WHERE id = ANY($1::uuid[]) AND status = 'pending'`,
);

/** One attempt and the state its delivery is left in. */
export interface AttemptRecord {
  attemptId: string;
  deliveryId: string;
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
  /** The first 2 KB of the answer's body (src/webhooks/sender.ts); null without an answer. */
  responseBody: string | null;
  responseBodyTruncated: boolean;
  attemptCount: number;
  status: DeliveryStatus;
  completedAt: Date | null;
  nextAttemptAt: Date | null;
  endpointId: string;
  /**
   * Set only when the endpoint answered 410 Gone: it is switched off with this reason, this delivery is held (status
   * held) and so are its other pending deliveries.
   */
  disabledReason: string | null;
}

// Hand-written: every finished attempt, batched; one statement writes each attempt's row (numbered after its
// delivery's earlier attempts), its delivery's new state and, on 410 Gone, its endpoint switched off, where Prisma
// would need an interactive transaction of three queries per attempt (most of the worker's CPU). An endpoint it
// switches off is audited in the same statement, and its other pending deliveries are held (not those of this batch,
// which their own rows set; those in flight elsewhere keep their lease, so none is sent twice if it is enabled again
// before they finish: their own record then sets their state). That step runs only when an endpoint was switched off
// (EXISTS: a one-time filter): the planner, taking `status = 'pending'` for a row or two once the table holds a
// history, read every pending delivery in it for every batch recorded.
const RECORD_ATTEMPTS = statement(
  'oct_record_webhook_attempts',
  `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::int[], $8::text[],
                         $9::timestamptz[], $10::timestamptz[], $11::uuid[], $12::text[], $15::text[], $16::boolean[])
      AS t(attempt_id, delivery_id, started_at, duration_ms, response_status, error, attempt_count, status, completed_at,
           next_attempt_at, endpoint_id, disabled_reason, response_body, response_body_truncated)
  ), attempt AS (
    INSERT INTO webhook_attempts (id, delivery_id, attempt_number, started_at, duration_ms, response_status, error,
                                  response_body, response_body_truncated)
    SELECT i.attempt_id, i.delivery_id, (SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = i.delivery_id) + 1,
           i.started_at, i.duration_ms, i.response_status, i.error, i.response_body, i.response_body_truncated
      FROM input i
  ), delivery AS (
    UPDATE webhook_deliveries d
       SET attempt_count = i.attempt_count, last_attempt_at = i.started_at, lease_expires_at = NULL, status = i.status::delivery_status,
           last_failure_at = CASE WHEN i.response_status BETWEEN 200 AND 299 THEN d.last_failure_at
                                  ELSE greatest(d.last_failure_at, i.started_at) END,
           completed_at = COALESCE(i.completed_at, d.completed_at), next_attempt_at = COALESCE(i.next_attempt_at, d.next_attempt_at),
           held_reason = CASE WHEN i.status = 'held' THEN ${heldReason('i.disabled_reason')} END
      FROM input i WHERE d.id = i.delivery_id
  ), endpoint AS (
    UPDATE webhook_endpoints e SET enabled = false, disabled_reason = i.disabled_reason, updated_at = $13::timestamptz
      FROM input i WHERE e.id = i.endpoint_id AND i.disabled_reason IS NOT NULL AND e.enabled
    RETURNING e.id, e.account_id, e.url, e.disabled_reason
  ), held AS (
    UPDATE webhook_deliveries d SET status = 'held', held_reason = ${heldReason('x.disabled_reason')}
      FROM endpoint x WHERE d.endpoint_id = x.id AND d.status = 'pending' AND NOT (d.id = ANY($2::uuid[]))
       AND EXISTS (SELECT FROM endpoint)
  ), disabled AS (
    INSERT INTO audit_log (id, account_id, agency_id, actor_kind, action, detail, created_at)
    SELECT gen_random_uuid(), x.account_id, COALESCE(a.agency_id, a.id), 'service', $14::text,
           jsonb_build_object('endpoint_id', x.id, 'url', x.url, 'reason', x.disabled_reason), $13::timestamptz
      FROM endpoint x JOIN accounts a ON a.id = x.account_id
  )
  SELECT 1`,
);

const ENDPOINT_DISABLED: AuditAction = 'webhook_disabled';

// Hand-written for its lock: the endpoint is read FOR KEY SHARE, as the transition's batch does
// (storage/call-batch.ts): an "Enable again" under way (FOR UPDATE) is waited for, and this then sees the endpoint enabled and holds nothing.
const HOLD_UNSENT = statement(
  'oct_hold_unsent_delivery',
  `
  UPDATE webhook_deliveries d SET status = 'held', held_reason = ${heldReason('e.disabled_reason')}, lease_expires_at = NULL
    FROM (SELECT id, disabled_reason FROM webhook_endpoints WHERE id = $2 AND NOT enabled FOR KEY SHARE) e
   WHERE d.id = $1 AND d.endpoint_id = e.id AND d.status = 'pending'`,
);

// The worker's safety net (hand-written: one statement, where Prisma's relation filter reads the ids first). The
// transition's batch (storage/call-batch.ts) and holdUnsentDelivery hold deliveries under a lock on the endpoint that
// "Enable again" (storage/endpoints.ts) waits for; the way left to a held delivery of an enabled endpoint is an
// attempt answered 410, recorded while the endpoint (disabled by an earlier one) is enabled again. Reads the held
// range of (status, next_attempt_at): held deliveries only, those of disabled endpoints.
const RELEASE_STRANDED = statement(
  'oct_release_stranded_held',
  `
  UPDATE webhook_deliveries d SET status = 'pending', held_reason = NULL, next_attempt_at = $1, completed_at = NULL, attempt_count = 0
    FROM webhook_endpoints e
   WHERE d.status = 'held' AND e.id = d.endpoint_id AND e.enabled`,
);

/** The pool side of the deliveries: the Prisma repository and the worker's statements. */
export class DeliveryWorkRepository extends DeliveryRepository {
  private readonly pool: pg.Pool;

  constructor(driver: PoolDriver) {
    super(driver);
    this.pool = driver.pool;
  }

  /**
   * Leases up to `limit` due deliveries until `leaseUntil`, at most `perEndpoint` per endpoint counting the attempts
   * this process has in flight (`inFlight`, by endpoint): none for an endpoint already at its cap. With `dueSince`, only
   * deliveries due at or after it (those written or come due lately); without, all.
   */
  async claimDueDeliveries(claim: {
    now: Date;
    inFlight: ReadonlyMap<string, number>;
    perEndpoint: number;
    limit: number;
    leaseUntil: Date;
    dueSince?: Date | undefined;
  }): Promise<ClaimedDelivery[]> {
    const full: string[] = [];
    const partIds: string[] = [];
    const partCounts: number[] = [];
    for (const [endpointId, n] of claim.inFlight) {
      if (n >= claim.perEndpoint) full.push(endpointId);
      else if (n > 0) {
        partIds.push(endpointId);
        partCounts.push(n);
      }
    }
    const { rows } = await this.pool.query<ClaimedDeliveryRow>({
      ...CLAIM_DELIVERIES,
      values: [
        claim.now,
        full,
        claim.perEndpoint,
        claim.limit,
        claim.leaseUntil,
        partIds,
        partCounts,
        claim.dueSince ?? new Date(0),
      ],
    });
    return openClaimed(rows, this.secrets);
  }

  /** Gives leased deliveries back unsent: any worker's next claim takes them. */
  async releaseDeliveries(deliveryIds: string[]): Promise<void> {
    await this.pool.query({ ...RELEASE, values: [deliveryIds] });
  }

  /**
   * Records the attempts in one statement (atomic: all or none). An endpoint switched off by a 410 gets its audit
   * entry (actor: the service) in the same statement; one already off is left as it was.
   */
  async recordAttempts(records: AttemptRecord[], now: Date): Promise<void> {
    const column = <K extends keyof AttemptRecord>(key: K) => records.map((r) => r[key]);
    await this.pool.query({
      ...RECORD_ATTEMPTS,
      values: [
        column('attemptId'),
        column('deliveryId'),
        column('startedAt'),
        column('durationMs'),
        column('responseStatus'),
        column('error'),
        column('attemptCount'),
        column('status'),
        column('completedAt'),
        column('nextAttemptAt'),
        column('endpointId'),
        column('disabledReason'),
        now,
        ENDPOINT_DISABLED,
        column('responseBody'),
        column('responseBodyTruncated'),
      ],
    });
  }

  /**
   * A claimed delivery whose endpoint was disabled when it was claimed is held, unsent. If the endpoint is enabled
   * again meanwhile, its lease is given back instead: the next claim sends it.
   */
  async holdUnsentDelivery(delivery: { id: string; endpointId: string }): Promise<void> {
    const { rowCount } = await this.pool.query({ ...HOLD_UNSENT, values: [delivery.id, delivery.endpointId] });
    if (!rowCount) await this.releaseDeliveries([delivery.id]);
  }

  /** Releases held deliveries whose endpoint is enabled (none, unless a race left one behind); returns how many. */
  async releaseStrandedDeliveries(now: Date): Promise<number> {
    const { rowCount } = await this.pool.query({ ...RELEASE_STRANDED, values: [now] });
    return rowCount ?? 0;
  }
}
