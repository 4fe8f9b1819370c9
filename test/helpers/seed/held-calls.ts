// Waiting calls the calling rules hold, and an agency's calling rules switched on, written straight to the database
// for the Overview's tests: the hold is the dispatcher's work before an attempt (the rules checked at that moment),
// which a test of the Overview's count need not run, and the Calling rules page that switches them on is built
// beside this one.
import { bulk, type Db } from './bulk.js';
import { DEFAULT_AGENCY_CALLING_RULES } from '../../../schemas/compliance.js';

type HeldBy = 'calling_rules' | 'cap' | null;

/**
 * `count` waiting calls of `accountId` (its agent `agentId`), created at `at`, that the calling rules hold (`heldBy`:
 * outside the permitted hours, or over a cap per number), as the dispatcher leaves them; or none held (`heldBy`
 * null), as any waiting call. Their ids.
 */
export function insertHeldCalls(
  db: Db,
  calls: { accountId: string; agentId: string; count: number; heldBy: HeldBy; at: Date },
): Promise<string[]> {
  return insertHeldCallsEach(db, { accounts: [calls], each: calls.count, heldBy: calls.heldBy, at: calls.at });
}

/**
 * As insertHeldCalls, `each` calls for every one of `accounts` (each with its agent), in one statement: the other
 * tenants' calls of a service in use. Their ids, account by account.
 */
export async function insertHeldCallsEach(
  db: Db,
  calls: { accounts: { accountId: string; agentId: string | null }[]; each: number; heldBy: HeldBy; at: Date },
): Promise<string[]> {
  const rows = await bulk<{ id: string }>(
    db,
    `INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, not_before, expires_at,
                        created_at, updated_at, held_by)
     SELECT gen_random_uuid(), o.account_id, o.agent_id, '+1305555' || lpad(i::text, 4, '0'), '+14155550100',
            '{}'::json, 'initiated', $4::timestamptz, $4::timestamptz + interval '1 day', $4, $4, $5::text
       FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS o (account_id, agent_id, n),
            generate_series(1, $3::int) AS i
      ORDER BY o.n, i
     RETURNING id`,
    [calls.accounts.map((a) => a.accountId), calls.accounts.map((a) => a.agentId), calls.each, calls.at, calls.heldBy],
  );
  return rows.map((r) => r.id);
}

/** The agency's calling rules, on (the defaults otherwise: every rule set) or off, as its settings would store them. */
export async function setCallingRulesEnabled(db: Db, agencyId: string, enabled: boolean): Promise<void> {
  await bulk(db, `UPDATE accounts SET calling_rules = $2::jsonb WHERE id = $1::uuid AND kind = 'agency'`, [
    agencyId,
    JSON.stringify({ ...DEFAULT_AGENCY_CALLING_RULES, enabled }),
  ]);
}
