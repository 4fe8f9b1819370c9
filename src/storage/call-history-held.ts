// The Calls list's "Held by the calling rules" filter: a page of the waiting calls the rules hold (status initiated,
// held_by set), read through their partial index calls_held (account_id; migration 20261202100001), which only such
// calls have an entry in: however many calls the accounts have, only their held ones are read, then the other filters
// and the page. Hand-written for that plan, on the pool.
import type { CallHistoryFilters, CallListRow } from './call-history.js';
import { containment, LIST_COLUMNS, type Owners } from './call-history-sql.js';
import { SqlRepository } from './driver.js';
import { statement } from './statements.js';

/**
 * The held calls of the accounts `$1` (or, for the calls listed for the clients `$1`, of the clients' agencies, whose
 * keys placed them: those calls are the agency's, account_id, and held there), every other filter applied, newest
 * first. `held` states the index's own predicate, so the planner reads calls_held for the ids first.
 */
const heldPage = (listed: boolean) =>
  statement(
    listed ? 'oct_call_history_held_listed' : 'oct_call_history_held',
    `
  WITH held AS MATERIALIZED (
    SELECT c.id FROM calls c
     WHERE c.account_id = ANY(${
       listed
         ? 'ARRAY(SELECT a.agency_id FROM accounts a WHERE a.id = ANY($1::uuid[]) AND a.agency_id IS NOT NULL)'
         : '$1::uuid[]'
     })
       AND c.status = 'initiated' AND c.held_by IS NOT NULL)
  SELECT ${LIST_COLUMNS} FROM calls c
   WHERE c.id = ANY(ARRAY(SELECT h.id FROM held h))
     AND c.status = 'initiated' AND c.held_by IS NOT NULL${listed ? ' AND c.listed_for_account_id = ANY($1::uuid[])' : ''}
     AND (c.created_at, c.id) < ($2::timestamptz, $3::uuid) AND c.created_at >= $4::timestamptz
     AND ($5::uuid IS NULL OR c.agent_id = $5::uuid)
     AND ($6::text IS NULL OR left(c.phone_number, char_length($6::text)) = $6::text)
     AND ($7::text IS NULL OR left(lower(c.name), char_length($7::text)) = lower($7::text))
     AND ($8::jsonb IS NULL OR jsonb_contains(c.metadata::jsonb, $8::jsonb) OR jsonb_contains(c.metadata::jsonb, $9::jsonb))
     AND ($10::text IS NULL OR c.outcome = $10::text)
   ORDER BY c.created_at DESC, c.id DESC
   LIMIT $11::int`,
  );

const HELD = heldPage(false);
const HELD_LISTED = heldPage(true);

/** Whether a call passes the held filter (a call searched by its id). */
export function passesHeld(filters: CallHistoryFilters, call: CallListRow): boolean {
  return !filters.held || (call.status === 'initiated' && call.heldBy !== null);
}

export class HeldCalls extends SqlRepository {
  /**
   * The newest `limit` held calls of `owners` below `upper` that pass `filters`: by account, or listed for clients
   * (an agency's whole scope is read by its accounts: the index is by account). A status other than waiting: none.
   */
  async newestHeld(
    owners: Owners,
    filters: CallHistoryFilters,
    upper: { at: Date | 'infinity'; id: string },
    limit: number,
  ): Promise<CallListRow[]> {
    if (owners.ids.length === 0 || (filters.status !== null && filters.status !== 'initiated')) return [];
    if (owners.column === 'agency_id') throw new Error('held calls are read by account, not by agency');
    const [a, b] = filters.metadata ? containment(filters.metadata) : [null, null];
    const { rows } = await this.pool.query<CallListRow>({
      ...(owners.column === 'listed_for_account_id' ? HELD_LISTED : HELD),
      values: [
        owners.ids,
        upper.at,
        upper.id,
        filters.from ?? '-infinity',
        filters.agentId,
        filters.numberPrefix,
        filters.namePrefix,
        a,
        b,
        filters.outcome,
        limit,
      ],
    });
    return rows;
  }
}
