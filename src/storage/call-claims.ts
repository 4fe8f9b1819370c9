// The calls table as the dispatcher uses it: due accounts, the per-account claim lock, the oldest due calls up to
// the free slots, leases, dial intents and provider ids, stale claims and expiries. Hand-written throughout: the
// claim's locks (advisory, FOR UPDATE SKIP LOCKED inside LATERAL) have no Prisma form, and the rest runs once per
// batch of calls on the background path, where Prisma's per-statement client cost was most of the dispatcher's CPU.
import type pg from 'pg';
import type { Call } from '../generated/prisma/client.js';
import type { VoicemailPolicy } from '../../schemas/vocabulary.js';
import { ACTIVE_STATUSES_SQL, CALL_COLUMNS, writeCallBatch, type PlannedBatch } from './calls.js';
import {
  calleeLedgerOn,
  pruneCalleeDials,
  writeCalleeDials,
  type CalleeDial,
  type CalleeLedger,
  type ComplianceWrite,
} from './callee-dials.js';
import type { ClaimedDelivery } from './delivery-work.js';
import { statement } from './statements.js';
import { SqlRepository } from './driver.js';
import {
  CARRIER_IN_USE_COLUMN,
  CARRIER_IN_USE_JOINS,
  RECORD_INTENTS,
  recordIntentsValues,
  type DialCarrier,
  type DialIntent,
} from './calls-carrier.js';

/** The first key of the claim's advisory locks (two-key form, so no clash with single-key locks such as Prisma's migrate lock). */
const CLAIM_LOCK_SPACE = 72707370;

/**
 * Within the claim's transaction: up to `limit` accounts with due calls and a free slot (an account at its limit must
 * not hide the ones behind it), each locked for this claimer (below). An account another replica is claiming for is
 * passed over, not returned: each replica's claim gets accounts of its own, rather than every replica getting the
 * same first ones and all but one locking none of them. A call past its time to live is never due: the expiry sweep
 * (on the dispatcher's poll) fails it. It starts from the accounts whose waiting_calls counter (kept by triggers) is
 * positive, and probes each one's waiting calls by (account_id, not_before) (calls_waiting_due, migration
 * 20261129010000): the first entry up to now, if it has not expired, says the account has a due call. Its cost follows
 * the number of accounts with a queue, not the number of calls waiting: through (account_id, status, created_at) it
 * read every waiting call of each, 185 ms a poll for 100,000 calls waiting for their window (bench:scale, queue).
 * OFFSET 0 keeps the lock out of the inner filter: only due accounts are locked, and no more than the LIMIT.
 */
const LOCK_DUE_ACCOUNTS = statement(
  'oct_lock_due_accounts',
  `
  SELECT due.id AS account_id FROM (
    SELECT a.id FROM accounts a
     WHERE a.waiting_calls > 0
       AND EXISTS (SELECT 1 FROM calls c WHERE c.account_id = a.id AND c.status = 'initiated' AND c.not_before <= $1 AND c.expires_at > $1
                    ORDER BY c.not_before LIMIT 1 OFFSET 0)
       AND (SELECT count(*) FROM calls c WHERE c.account_id = a.id AND c.status IN (${ACTIVE_STATUSES_SQL})) < $2
    OFFSET 0) AS due
   WHERE pg_try_advisory_xact_lock(${CLAIM_LOCK_SPACE}, hashtext(due.id::text))
   LIMIT $3`,
);

export async function lockDueAccounts(
  client: pg.ClientBase,
  { now, maxActive, limit }: { now: Date; maxActive: number; limit: number },
): Promise<string[]> {
  const { rows } = await client.query<{ account_id: string }>({
    ...LOCK_DUE_ACCOUNTS,
    values: [now, maxActive, limit],
  });
  return rows.map((r) => r.account_id);
}

/**
 * One claimer per account at a time, across replicas: a transaction-level advisory lock per account (another
 * replica claiming for the account holds it: skip the account rather than wait). Not the account's row lock, which
 * every acceptance for the account takes: during a bulk trigger for one account that row is nearly always locked,
 * and the claim skipped the very account whose queue was growing.
 */
const LOCK_ACCOUNTS = statement(
  'oct_lock_accounts',
  `SELECT id FROM unnest($1::uuid[]) AS a(id) WHERE pg_try_advisory_xact_lock(${CLAIM_LOCK_SPACE}, hashtext(id::text))`,
);

/** Within the claim's transaction: the accounts of `accountIds` this claimer now holds. */
export async function lockAccountsForClaim(client: pg.ClientBase, accountIds: string[]): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>({ ...LOCK_ACCOUNTS, values: [accountIds] });
  return rows.map((r) => r.id);
}

/** What a claim's plan decides: the batch, the calls put back for their window, the dials and decision records. */
export type ClaimPlan<T> = PlannedBatch<T> & {
  waiting: { id: string; notBefore: Date }[];
  dials: CalleeDial[];
  records: ComplianceWrite[];
};

export type ClaimCandidate = Call & {
  agentTimezone: string;
  agentCallingWindows: unknown;
  /**
   * The number is on the do-not-call list of the call's account, its agency or the client the call is listed for
   * (listed after acceptance).
   */
  onDoNotCallList: boolean;
  /** The calling-rules settings of the call's agency (the account's own when it is one): null, off. */
  agencyCallingRules: unknown;
  /** A client account's own narrower hours (null for an agency's call), and those of the client it is listed for. */
  clientCallingRules: unknown;
  listedForCallingRules: unknown;
  /** The call's agency (calls.agency_id, or its account's), for the dial ledger. */
  ledgerAgencyId: string;
} & AgentVoicemail &
  DialCarrier;

/** The agent's answering-machine detection, read with a call about to be dialled (the dialer asks for it). */
export interface AgentVoicemail {
  agentVoicemail: VoicemailPolicy;
  agentVoicemailMessage: string | null;
}
const AGENT_VOICEMAIL_COLUMNS = `ag.voicemail::text AS "agentVoicemail", ag.voicemail_message AS "agentVoicemailMessage"`;

/**
 * Per locked account, its oldest due calls up to its free slots, locked, with their agent's windows and whether their
 * number is now on the do-not-call list of the account, its agency or the client the call is listed for (an agency's
 * key on a client's agent): probes of its unique index, in this round trip. With them, the calling-rules settings
 * (issue 48) of the agency (one primary-key probe per account) and of the clients (the account's own row, and a probe
 * for a call listed for a client), as stored: read before every attempt. A statement of its own after the account locks: under READ COMMITTED its snapshot sees every claim committed
 * by whoever held a lock before us, so the count of active calls is exact.
 */
const CANDIDATES = statement(
  'oct_claim_candidates',
  `
  SELECT ${CALL_COLUMNS}, ag.timezone AS "agentTimezone", ag.calling_windows AS "agentCallingWindows",
         ${AGENT_VOICEMAIL_COLUMNS},
         EXISTS (SELECT 1 FROM do_not_call_entries d WHERE d.account_id IN (acc.id, acc.agency_id, c.listed_for_account_id)
                    AND d.phone_number = c.phone_number) AS "onDoNotCallList",
         CASE WHEN acc.agency_id IS NULL THEN acc.calling_rules ELSE agy.calling_rules END AS "agencyCallingRules",
         CASE WHEN acc.agency_id IS NOT NULL THEN acc.calling_rules END AS "clientCallingRules",
         (SELECT lf.calling_rules FROM accounts lf WHERE lf.id = c.listed_for_account_id) AS "listedForCallingRules",
         coalesce(c.agency_id, acc.agency_id, acc.id) AS "ledgerAgencyId", ${CARRIER_IN_USE_COLUMN}
    FROM unnest($1::uuid[]) AS a(id)
    JOIN accounts acc ON acc.id = a.id
    LEFT JOIN accounts agy ON agy.id = acc.agency_id ${CARRIER_IN_USE_JOINS}
   CROSS JOIN LATERAL (SELECT $2::int - count(*)::int AS free FROM calls
                        WHERE account_id = a.id AND status IN (${ACTIVE_STATUSES_SQL})) AS slots
   CROSS JOIN LATERAL (SELECT * FROM calls WHERE account_id = a.id AND status = 'initiated' AND not_before <= $3 AND expires_at > $3
                        ORDER BY created_at, id LIMIT greatest(slots.free, 0) FOR UPDATE SKIP LOCKED) AS c
    JOIN agents ag ON ag.id = c.agent_id
   ORDER BY c.created_at, c.id`,
);

export async function claimCandidates(
  client: pg.ClientBase,
  { accountIds, maxActive, now }: { accountIds: string[]; maxActive: number; now: Date },
): Promise<ClaimCandidate[]> {
  const { rows } = await client.query<ClaimCandidate>({
    ...CANDIDATES,
    values: [accountIds, maxActive, now],
  });
  return rows;
}

/** Calls whose window closed while they waited for a slot wait for its next opening instead. */
const RESCHEDULE = statement(
  'oct_reschedule',
  `
  UPDATE calls c SET not_before = u.not_before, updated_at = $3
    FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, not_before) WHERE c.id = u.id`,
);

export async function rescheduleCalls(client: pg.ClientBase, calls: { id: string; notBefore: Date }[]): Promise<void> {
  await client.query({ ...RESCHEDULE, values: [calls.map((c) => c.id), calls.map((c) => c.notBefore), new Date()] });
}

/**
 * The provider ids of dialled attempts. Only for the attempt dialled: a dial whose answer came back after its attempt
 * had already ended (a callback beat it) and the call was claimed again for the next attempt, by the same dispatcher,
 * must not give the next attempt its id.
 */
const RECORD_DIALLED = statement(
  'oct_record_dialled',
  `
  UPDATE calls c SET provider_call_id = u.provider_call_id, lease_owner = NULL, lease_expires_at = NULL, updated_at = $3
    FROM unnest($1::uuid[], $2::text[], $5::int[]) AS u(id, provider_call_id, attempt)
   WHERE c.id = u.id AND c.lease_owner = $4 AND c.attempt = u.attempt`,
);

const STALE = statement(
  'oct_stale_claims',
  `SELECT ${CALL_COLUMNS}, ${AGENT_VOICEMAIL_COLUMNS}, ${CARRIER_IN_USE_COLUMN} FROM calls c JOIN agents ag ON ag.id = c.agent_id
    JOIN accounts acc ON acc.id = c.account_id LEFT JOIN accounts agy ON agy.id = acc.agency_id ${CARRIER_IN_USE_JOINS}
    WHERE c.status = 'dialing' AND c.provider_call_id IS NULL AND c.lease_expires_at < $1 LIMIT 100`,
);

const TAKE_OVER = statement(
  'oct_take_over',
  `
  UPDATE calls SET lease_owner = $2, lease_expires_at = $3, updated_at = $4
   WHERE id = $1 AND status = 'dialing' AND provider_call_id IS NULL AND lease_expires_at < $5`,
);

/**
 * Waiting calls past their time to live, the longest expired first. The order is what keeps the generic plan on the
 * expiry index (calls_expiry_of_waiting): without it, where most calls wait (a queue for tomorrow's window), that
 * plan guessed a third of them expired and scanned the table for 500, reading all of it when none had (the usual
 * case), on every poll: 98 ms on the bench's 158,000-call queue database.
 */
const EXPIRED = statement(
  'oct_expired',
  `SELECT id FROM calls WHERE status = 'initiated' AND expires_at <= $1 ORDER BY expires_at LIMIT 500`,
);

export class ClaimRepository extends SqlRepository {
  /**
   * The claim transaction: BEGIN, lock the accounts (the hinted `accounts`, or the due ones), their candidates,
   * then what `plan` decides for them: the calls that wait for their window are rescheduled and the batch is written
   * (writeCallBatch), COMMIT. The same statements in the same order as one hand-written transaction: a method owning
   * its pg transaction (not a step of `Storage.transaction`), because Prisma cannot run on a pg client and this is the
   * dispatcher's hot path. `result` is null when no account was locked. `plan` may lock callees and count their dials
   * through the ledger it is given (callee-dials.ts), in this transaction; the dials and decision records it returns
   * are written before the batch.
   */
  async claimDue<T>(
    accounts: string[] | { now: Date; maxActive: number; limit: number },
    candidates: { maxActive: number; now: Date },
    plan: (candidates: ClaimCandidate[], ledger: CalleeLedger) => Promise<ClaimPlan<T>>,
  ): Promise<{ locked: string[]; result: T | null; leased: ClaimedDelivery[] }> {
    return this.transaction(async (client) => {
      const locked = Array.isArray(accounts)
        ? await lockAccountsForClaim(client, accounts)
        : await lockDueAccounts(client, accounts);
      if (locked.length === 0) return { locked, result: null, leased: [] };
      const found = await claimCandidates(client, { ...candidates, accountIds: locked });
      const { waiting, batch, result, dials, records } = await plan(found, calleeLedgerOn(client));
      if (waiting.length > 0) await rescheduleCalls(client, waiting);
      await writeCalleeDials(client, dials, records, candidates.now);
      return { locked, result, leased: batch ? await writeCallBatch(client, batch, this.secrets) : [] };
    });
  }

  /** Deletes up to `batch` dial-ledger rows older than `before` (housekeeping); returns how many. */
  pruneCalleeDials(before: Date, batch = 10_000): Promise<number> {
    return pruneCalleeDials(this.pool, before, batch);
  }

  /**
   * Records the intent to dial each call `owner` still holds, with the carrier it is dialled with; returns the ids
   * recorded (the others were taken over).
   */
  async recordDialIntents(intents: DialIntent[], owner: string): Promise<Set<string>> {
    const values = recordIntentsValues(intents, owner);
    const { rows } = await this.pool.query<{ id: string }>({ ...RECORD_INTENTS, values });
    return new Set(rows.map((r) => r.id));
  }

  /** The provider accepted these dials (of these attempts): their ids are recorded and the leases released. */
  async recordProviderIds(
    calls: { id: string; providerCallId: string; attempt: number }[],
    owner: string,
  ): Promise<void> {
    await this.pool.query({
      ...RECORD_DIALLED,
      values: [
        calls.map((c) => c.id),
        calls.map((c) => c.providerCallId),
        new Date(),
        owner,
        calls.map((c) => c.attempt),
      ],
    });
  }

  /** Calls claimed by a dispatcher whose lease ran out before a provider id was recorded. */
  async staleClaims(now: Date): Promise<(Call & AgentVoicemail & DialCarrier)[]> {
    return (await this.pool.query<Call & AgentVoicemail & DialCarrier>({ ...STALE, values: [now] })).rows;
  }

  /** Takes a stale claim over; false when another dispatcher got there first. */
  async takeOverClaim({
    callId,
    owner,
    leaseExpiresAt,
    now,
  }: {
    callId: string;
    owner: string;
    leaseExpiresAt: Date;
    now: Date;
  }): Promise<boolean> {
    const { rowCount } = await this.pool.query({
      ...TAKE_OVER,
      values: [callId, owner, leaseExpiresAt, new Date(), now],
    });
    return rowCount === 1;
  }

  /** Waiting calls past their time to live (a batch). */
  async expiredCallIds(now: Date): Promise<string[]> {
    return (await this.pool.query<{ id: string }>({ ...EXPIRED, values: [now] })).rows.map((r) => r.id);
  }
}
