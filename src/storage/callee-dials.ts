// The dial ledger (callee_dials, migration 20261202100000) inside the dispatcher's claim transaction: the locks per
// callee that make a cap per callee hold across replicas, the counts of dials in each cap's window, the claim's
// dials and decision records written in one statement, and the housekeeping's pruning. Hand-written: advisory locks,
// on the claim's own pg client (call-claims.ts), once per claim on the dispatcher's hot path.
import type pg from 'pg';
import { statement } from './statements.js';

/** The first key of the callee locks (two-key form): clear of the claim's 72707370 and the leader's 72707371-72. */
const CALLEE_LOCK_SPACE = 72707373;

/**
 * One lock per (scope, number), taken in the order of its key so that two claims wanting the same numbers never wait
 * for each other crosswise. Blocking: the other claim holds it only until its commit (its other locks are try-locks),
 * and the count that follows must see the dials that claim wrote. OFFSET 0 keeps the sort below the lock calls.
 */
const LOCK_CALLEES = statement(
  'oct_lock_callees',
  `SELECT pg_advisory_xact_lock(${CALLEE_LOCK_SPACE}, k.h)::text AS locked
     FROM (SELECT DISTINCT hashtext(x) AS h FROM unnest($1::text[]) AS x ORDER BY h OFFSET 0) AS k`,
);

/**
 * Per request (scope id, number, window in hours, limit), the dials to the number within the window and the newest
 * `limit` of their times (oldest first): the times the next allowed moment is read from. Counted by agency or by
 * account, each on its index (callee_dials_agency, callee_dials_account: a range of (id, number, dialed_at)).
 * Exported for bench/cap-check.ts, which times it and shows its plan.
 */
export const COUNT_DIALS = statement(
  'oct_count_callee_dials',
  `
  SELECT r.i::int AS i, n.count, w.newest
    FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[]) WITH ORDINALITY AS r(scope_id, phone, hours, lim, i)
   CROSS JOIN LATERAL (SELECT count(*)::int AS count FROM callee_dials d
                        WHERE d.agency_id = r.scope_id AND d.phone_number = r.phone
                          AND d.dialed_at > $9::timestamptz - make_interval(hours => r.hours)) AS n
   CROSS JOIN LATERAL (SELECT array_agg(t.dialed_at ORDER BY t.dialed_at) AS newest FROM (
                        SELECT d.dialed_at FROM callee_dials d
                         WHERE d.agency_id = r.scope_id AND d.phone_number = r.phone
                           AND d.dialed_at > $9::timestamptz - make_interval(hours => r.hours)
                         ORDER BY d.dialed_at DESC LIMIT r.lim) AS t) AS w
  UNION ALL
  SELECT -r.i::int AS i, n.count, w.newest
    FROM unnest($5::uuid[], $6::text[], $7::int[], $8::int[]) WITH ORDINALITY AS r(scope_id, phone, hours, lim, i)
   CROSS JOIN LATERAL (SELECT count(*)::int AS count FROM callee_dials d
                        WHERE d.account_id = r.scope_id AND d.phone_number = r.phone
                          AND d.dialed_at > $9::timestamptz - make_interval(hours => r.hours)) AS n
   CROSS JOIN LATERAL (SELECT array_agg(t.dialed_at ORDER BY t.dialed_at) AS newest FROM (
                        SELECT d.dialed_at FROM callee_dials d
                         WHERE d.account_id = r.scope_id AND d.phone_number = r.phone
                           AND d.dialed_at > $9::timestamptz - make_interval(hours => r.hours)
                         ORDER BY d.dialed_at DESC LIMIT r.lim) AS t) AS w`,
);

/**
 * The claim's dials (one row per attempt, rules on or off: a cap switched on later counts them) and the decision
 * records and holds of its calls (held ones wait until `not_before`; dialled ones are no longer held), one statement.
 */
const WRITE_DIALS = statement(
  'oct_write_callee_dials',
  `
  WITH dials AS (
    INSERT INTO callee_dials (call_id, attempt, agency_id, account_id, phone_number, dialed_at)
    SELECT d.call_id, d.attempt, d.agency_id, d.account_id, d.phone_number, $10::timestamptz
      FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::uuid[], $5::text[])
           AS d(call_id, attempt, agency_id, account_id, phone_number)
    ON CONFLICT DO NOTHING
  )
  UPDATE calls c SET compliance = u.compliance::jsonb, held_by = u.held_by,
         not_before = coalesce(u.not_before, c.not_before), updated_at = $10::timestamptz
    FROM unnest($6::uuid[], $7::text[], $8::text[], $9::timestamptz[]) AS u(id, compliance, held_by, not_before)
   WHERE c.id = u.id`,
);

/** Dials older than the longest window (7 days) and a day's margin, a batch at a time on the dialed_at index. */
const PRUNE_DIALS = statement(
  'oct_prune_callee_dials',
  `DELETE FROM callee_dials WHERE ctid = ANY(ARRAY(SELECT ctid FROM callee_dials WHERE dialed_at < $1 LIMIT $2))`,
);

/** A count asked for: the dials to `phone` within `windowHours`, by agency or by account. */
export interface DialCountRequest {
  scope: 'agency' | 'account';
  scopeId: string;
  phone: string;
  windowHours: number;
  /** How many of the newest dials' times to return. */
  limit: number;
}

export interface DialCount {
  count: number;
  /** The newest `limit` dials' times within the window, oldest first. */
  newest: Date[];
}

/** A dial the claim makes: its ledger row. */
export interface CalleeDial {
  callId: string;
  attempt: number;
  agencyId: string;
  accountId: string;
  phoneNumber: string;
}

/** A call's decision record (all of calls.compliance) and hold, written with the claim. */
export interface ComplianceWrite {
  id: string;
  /** calls.compliance as it is to be: a JSON array of the attempts' records. */
  compliance: unknown;
  heldBy: 'calling_rules' | 'cap' | null;
  /** A held call's next try; null leaves not_before as it is. */
  notBefore: Date | null;
}

/** The claim's view of the ledger: lock the callees, then count their dials (in a statement of its own, after). */
export interface CalleeLedger {
  /** `keys`: one text per (scope id, number), hashed to the lock's second key. */
  lock(keys: string[]): Promise<void>;
  count(requests: DialCountRequest[], now: Date): Promise<DialCount[]>;
}

export function calleeLedgerOn(client: pg.ClientBase): CalleeLedger {
  return {
    async lock(keys) {
      if (keys.length > 0) await client.query({ ...LOCK_CALLEES, values: [keys] });
    },
    async count(requests, now) {
      if (requests.length === 0) return [];
      const agency = requests.filter((r) => r.scope === 'agency');
      const account = requests.filter((r) => r.scope === 'account');
      const columns = (rs: DialCountRequest[]) => [
        rs.map((r) => r.scopeId),
        rs.map((r) => r.phone),
        rs.map((r) => r.windowHours),
        rs.map((r) => r.limit),
      ];
      const { rows } = await client.query<{ i: number; count: number; newest: Date[] | null }>({
        ...COUNT_DIALS,
        values: [...columns(agency), ...columns(account), now],
      });
      const byRequest = new Map<DialCountRequest, DialCount>();
      for (const row of rows) {
        const request = row.i > 0 ? agency[row.i - 1]! : account[-row.i - 1]!;
        byRequest.set(request, { count: row.count, newest: row.newest ?? [] });
      }
      return requests.map((r) => byRequest.get(r)!);
    },
  };
}

/** Writes the claim's dials and decision records (nothing when there is neither). */
export async function writeCalleeDials(
  client: pg.ClientBase,
  dials: CalleeDial[],
  records: ComplianceWrite[],
  now: Date,
): Promise<void> {
  if (dials.length === 0 && records.length === 0) return;
  await client.query({
    ...WRITE_DIALS,
    values: [
      dials.map((d) => d.callId),
      dials.map((d) => d.attempt),
      dials.map((d) => d.agencyId),
      dials.map((d) => d.accountId),
      dials.map((d) => d.phoneNumber),
      records.map((r) => r.id),
      records.map((r) => (r.compliance === null || r.compliance === undefined ? null : JSON.stringify(r.compliance))),
      records.map((r) => r.heldBy),
      records.map((r) => r.notBefore),
      now,
    ],
  });
}

/** Deletes up to `batch` dials older than `before`; returns how many. */
export async function pruneCalleeDials(pool: pg.Pool, before: Date, batch: number): Promise<number> {
  const { rowCount } = await pool.query({ ...PRUNE_DIALS, values: [before, batch] });
  return rowCount ?? 0;
}
