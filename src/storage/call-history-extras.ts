// The Calls list's per-call extras (one metadata key's value, a waiting call's place in line) and a call's metadata
// as written and its runtime result, for its detail. Hand-written on the pool: Prisma would reorder the JSON's keys and has no subquery.
import { SqlRepository } from './driver.js';
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

// Hand-written: the runtime's result as stored (json text: its data keeps the runtime's key order, as metadata does).
const RESULT_TEXT = statement(
  'oct_call_history_result',
  'SELECT body::text AS body, in_event AS "inEvent" FROM call_results WHERE call_id = $1::uuid',
);

// Hand-written: the outcome labels a scope's calls have, in order, one descent of the partial (owner, outcome, ...)
// index each (a loose index scan: PostgreSQL has no skip scan before 18, and DISTINCT would read every labelled call).
const outcomeLabels = (owner: 'account_id' | 'agency_id') =>
  statement(
    `oct_call_history_outcome_labels${owner === 'agency_id' ? '_by_agency' : ''}`,
    `
  WITH RECURSIVE labels AS (
    (SELECT c.outcome FROM calls c WHERE c.${owner} = $1::uuid AND c.outcome IS NOT NULL ORDER BY c.outcome LIMIT 1)
    UNION ALL
    SELECT (SELECT c.outcome FROM calls c
             WHERE c.${owner} = $1::uuid AND c.outcome IS NOT NULL AND c.outcome > l.outcome
             ORDER BY c.outcome LIMIT 1)
      FROM labels l WHERE l.outcome IS NOT NULL
  )
  SELECT outcome FROM labels WHERE outcome IS NOT NULL LIMIT $2::int`,
  );
const OUTCOME_LABELS = { account_id: outcomeLabels('account_id'), agency_id: outcomeLabels('agency_id') };

/** A call's result as stored: the published body's JSON text, and whether the terminal event carried it. */
export interface StoredResult {
  body: string;
  inEvent: boolean;
}

export class CallExtras extends SqlRepository {
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

  /** The call's metadata as the client wrote it (its JSON text), or null when there is no such call. */
  async metadataText(callId: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ metadata: string }>({ ...METADATA_TEXT, values: [callId] });
    return rows[0]?.metadata ?? null;
  }

  /** The first `limit` outcome labels (in order) of the calls of `owner`: an account's, or an agency's whole scope. */
  async outcomeLabels(owner: { column: 'account_id' | 'agency_id'; id: string }, limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ outcome: string }>({
      ...OUTCOME_LABELS[owner.column],
      values: [owner.id, limit],
    });
    return rows.map((r) => r.outcome);
  }

  /**
   * The runtime's result of the call as published (its JSON text) and whether the terminal event carried it, or null
   * when it reported none.
   */
  async resultText(callId: string): Promise<StoredResult | null> {
    const { rows } = await this.pool.query<StoredResult>({ ...RESULT_TEXT, values: [callId] });
    return rows[0] ?? null;
  }
}
