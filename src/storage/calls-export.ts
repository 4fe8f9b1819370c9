// The consent export's reads: the calls of a scope created in a period, oldest first, in batches (keyset on
// (created_at, id)), each with its account's and agent's names, its consent and its last decision record. Hand-written
// on the pool: each owner's calls are one ordered range of its (owner, created_at, id) index, read a batch at a time,
// so a batch costs the same at the period's end as at its start.
import type { ExportCall } from '../domain/calls-csv.js';
import type { HistoryAccounts } from './call-history.js';
import { MIN_UUID } from './call-history-sql.js';
import { SqlRepository } from './driver.js';
import { statement } from './statements.js';

/** Calls per batch: one statement each. */
export const EXPORT_BATCH_CALLS = 1_000;

/** The next `$7` calls after ($4, $5) created before $6 of one kind of owner: a range of its index, in order. */
const branch = (owner: string, ids: string) => `
    SELECT x.created_at, x.id FROM unnest(${ids}::uuid[]) AS o(id)
     CROSS JOIN LATERAL (
       SELECT c.created_at, c.id FROM calls c
        WHERE c.${owner} = o.id${owner === 'listed_for_account_id' ? ` AND c.${owner} IS NOT NULL` : ''}
          AND (c.created_at, c.id) > ($4::timestamptz, $5::uuid) AND c.created_at < $6::timestamptz
        ORDER BY c.created_at, c.id
        LIMIT $7::int) AS x`;

// Hand-written: the accounts' own calls ($1), those listed for the clients $2 (an agency's key on their agents), and
// an agency's whole scope ($3, by agency_id); each branch an ordered range of its own index, then the batch's rows by
// their primary key (as an array: joined, the planner may read the whole table for a thousand of them).
const EXPORT_BATCH = statement(
  'oct_calls_export_batch',
  `
  WITH batch AS MATERIALIZED (
    SELECT u.created_at, u.id FROM (${branch('account_id', '$1')}
     UNION ALL ${branch('listed_for_account_id', '$2')}
     UNION ALL ${branch('agency_id', '$3')}) AS u
     ORDER BY u.created_at, u.id
     LIMIT $7::int)
  SELECT c.id, c.created_at AS "createdAt", coalesce(l.name, a.name) AS account, g.name AS agent,
         c.phone_number AS "phoneNumber", c.name, c.status::text AS status, c.recipient_region AS "recipientRegion",
         c.consent, CASE WHEN jsonb_typeof(c.compliance) = 'array' THEN c.compliance -> -1 END AS "lastRecord"
    FROM calls c
    LEFT JOIN accounts a ON a.id = c.account_id
    LEFT JOIN accounts l ON l.id = c.listed_for_account_id
    LEFT JOIN agents g ON g.id = c.agent_id
   WHERE c.id = ANY(ARRAY(SELECT b.id FROM batch b))
   ORDER BY c.created_at, c.id`,
);

// Hand-written: every agency, for an operator's export of all accounts (each agency's scope is one range).
const ALL_AGENCIES = statement('oct_calls_export_agencies', `SELECT id FROM accounts WHERE kind = 'agency'`);

/** Whose calls an export reads: a scope's accounts (HistoryAccounts), or every account (the operator's). */
export type ExportOwners = HistoryAccounts | { all: true };

export class CallsExport extends SqlRepository {
  /** The calls of `owners` created in [from, to), oldest first, a batch at a time. */
  async *eachCall(
    owners: ExportOwners,
    from: Date,
    to: Date,
    batch = EXPORT_BATCH_CALLS,
  ): AsyncGenerator<ExportCall[]> {
    let agencies: string[] = [];
    if ('all' in owners) agencies = (await this.pool.query<{ id: string }>(ALL_AGENCIES)).rows.map((r) => r.id);
    else if ('agencyId' in owners) agencies = [owners.agencyId];
    const accounts = 'accountIds' in owners ? owners.accountIds : [];
    const listed = 'accountIds' in owners ? (owners.listedFor ?? []) : [];
    let after: { at: Date; id: string } = { at: new Date(from.getTime() - 1), id: MIN_UUID };
    for (;;) {
      const { rows } = await this.pool.query<ExportCall>({
        ...EXPORT_BATCH,
        values: [accounts, listed, agencies, after.at, after.id, to, batch],
      });
      const kept = rows.filter((r) => r.createdAt.getTime() >= from.getTime());
      if (kept.length > 0) yield kept;
      const last = rows.at(-1);
      if (!last || rows.length < batch) return;
      after = { at: last.createdAt, id: last.id };
    }
  }
}
