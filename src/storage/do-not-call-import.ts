// A do-not-call import's writes, each one short statement on its own: the account's import slot (one at a time per
// account across replicas, a few an hour), its rows staged as the file is read (do_not_call_import_rows: a number
// repeated in the file is one row, the first), then moved to the list in bounded batches (each taken off the stage);
// and the waiting calls a newly listed number ends (an agency's key's calls listed for a client among them).
// Hand-written: multi-row writes from arrays (unnest) and data-modifying CTEs that Prisma cannot express, each under
// the pool's query timeout whatever the file's size.
import { DoNotCallRepository } from './do-not-call.js';
import { SqlRepository, type PoolDriver } from './driver.js';
import { statement } from './statements.js';

/** Why an import could not start: another is under way, or the hour's imports are used up (until `until`). */
export type ImportSlot = { kind: 'started' } | { kind: 'running' } | { kind: 'too_many'; until: Date };

const START = statement(
  'oct_dnc_import_start',
  `
  INSERT INTO do_not_call_imports AS i (account_id, import_id, heartbeat_at, window_started_at, window_count)
  VALUES ($1, $2, $3, $3, 1)
  ON CONFLICT (account_id) DO UPDATE SET
    import_id = excluded.import_id,
    heartbeat_at = excluded.heartbeat_at,
    window_started_at = CASE WHEN i.window_started_at <= $5 THEN excluded.window_started_at ELSE i.window_started_at END,
    window_count = CASE WHEN i.window_started_at <= $5 THEN 1 ELSE i.window_count + 1 END
  WHERE (i.heartbeat_at IS NULL OR i.heartbeat_at < $4) AND (i.window_started_at <= $5 OR i.window_count < $6)
  RETURNING import_id`,
);

const SLOT = statement(
  'oct_dnc_import_slot',
  `SELECT heartbeat_at AS "heartbeatAt", window_started_at AS "windowStartedAt" FROM do_not_call_imports WHERE account_id = $1`,
);

const HEARTBEAT = statement(
  'oct_dnc_import_heartbeat',
  `UPDATE do_not_call_imports SET heartbeat_at = $3 WHERE account_id = $1 AND import_id = $2`,
);

const FINISH = statement(
  'oct_dnc_import_finish',
  `UPDATE do_not_call_imports SET heartbeat_at = NULL WHERE account_id = $1 AND import_id = $2`,
);

const CLEAR = statement(
  'oct_dnc_import_clear',
  `
  DELETE FROM do_not_call_import_rows r USING (
    SELECT phone_number FROM do_not_call_import_rows WHERE account_id = $1 LIMIT $2) AS b
   WHERE r.account_id = $1 AND r.phone_number = b.phone_number`,
);

const STAGE = statement(
  'oct_dnc_import_stage',
  `
  INSERT INTO do_not_call_import_rows (account_id, phone_number, reason, line)
  SELECT $1, u.phone_number, u.reason, u.line
    FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS u(phone_number, reason, line, n)
   ORDER BY u.n
  ON CONFLICT DO NOTHING`,
);

const MOVE = statement(
  'oct_dnc_import_move',
  `
  WITH batch AS (DELETE FROM do_not_call_import_rows r
                  USING (SELECT phone_number FROM do_not_call_import_rows WHERE account_id = $1
                          ORDER BY phone_number LIMIT $2) AS b
                  WHERE r.account_id = $1 AND r.phone_number = b.phone_number
              RETURNING r.phone_number, r.reason),
       added AS (INSERT INTO do_not_call_entries (id, account_id, phone_number, reason, added_by, added_at)
                 SELECT gen_random_uuid(), $1, phone_number, reason, $3, $4 FROM batch
                 ON CONFLICT DO NOTHING RETURNING phone_number)
  SELECT (SELECT count(*) FROM batch)::int AS rows, coalesce((SELECT array_agg(phone_number) FROM added), '{}') AS added`,
);

/**
 * The waiting calls (status initiated) to these numbers that a list covers: those of the list's account and, for an
 * agency's, of its clients; and, for a client's, those its agency's key placed on the client's agents (the agency's
 * calls, listed for the client: calls.listed_for_account_id), through the partial index of listed calls by number.
 * Only accounts with waiting calls are read (for listed calls, the agency's counter counts them), and a waiting queue
 * is bounded per account. The two parts share no call: a listed call's account is the client's agency.
 */
const WAITING_CALLS = statement(
  'oct_dnc_waiting_calls',
  `
  SELECT c.id FROM accounts a
    JOIN calls c ON c.account_id = a.id AND c.status = 'initiated'
   WHERE (a.id = $1 OR a.agency_id = $1) AND a.waiting_calls > 0 AND c.phone_number = ANY($2::text[])
  UNION ALL
  SELECT c.id FROM accounts a
    JOIN accounts agency ON agency.id = a.agency_id AND agency.waiting_calls > 0
    JOIN calls c ON c.listed_for_account_id = a.id AND c.account_id = agency.id AND c.status = 'initiated'
   WHERE a.id = $1 AND c.listed_for_account_id IS NOT NULL AND c.phone_number = ANY($2::text[])`,
);

export class DoNotCallImportRepository extends SqlRepository {
  /**
   * Takes the account's import slot for `importId` unless another import's heartbeat is newer than `staleBefore` or
   * `perHour` imports began since `hourAgo`.
   */
  async start(
    accountId: string,
    importId: string,
    at: { now: Date; staleBefore: Date; hourAgo: Date; perHour: number },
  ): Promise<ImportSlot> {
    const { rowCount } = await this.pool.query({
      ...START,
      values: [accountId, importId, at.now, at.staleBefore, at.hourAgo, at.perHour],
    });
    if (rowCount === 1) return { kind: 'started' };
    const { rows } = await this.pool.query<{ heartbeatAt: Date | null; windowStartedAt: Date }>({
      ...SLOT,
      values: [accountId],
    });
    const slot = rows[0];
    if (slot?.heartbeatAt && slot.heartbeatAt >= at.staleBefore) return { kind: 'running' };
    return { kind: 'too_many', until: new Date((slot?.windowStartedAt ?? at.now).getTime() + 3_600_000) };
  }

  /** The import still holds the slot (another did not take it over); its heartbeat is now `now`. */
  async heartbeat(accountId: string, importId: string, now: Date): Promise<boolean> {
    const { rowCount } = await this.pool.query({ ...HEARTBEAT, values: [accountId, importId, now] });
    return rowCount === 1;
  }

  /** Gives the slot back (the staged rows are cleared first, by clearStaged). */
  async finish(accountId: string, importId: string): Promise<void> {
    await this.pool.query({ ...FINISH, values: [accountId, importId] });
  }

  /** Deletes the account's staged rows (a finished import's, or those a dead process left), `batch` at a time. */
  async clearStaged(accountId: string, batch: number): Promise<void> {
    for (;;) {
      const { rowCount } = await this.pool.query({ ...CLEAR, values: [accountId, batch] });
      if ((rowCount ?? 0) < batch) return;
    }
  }

  /** Stages rows in file order; how many were new (the others repeat a number staged before). */
  async stage(
    accountId: string,
    rows: { phoneNumber: string; reason: string | null; line: number }[],
  ): Promise<number> {
    if (rows.length === 0) return 0;
    const { rowCount } = await this.pool.query({
      ...STAGE,
      values: [accountId, rows.map((r) => r.phoneNumber), rows.map((r) => r.reason), rows.map((r) => r.line)],
    });
    return rowCount ?? 0;
  }

  /**
   * Moves the first `limit` staged rows (in number order) to the list, taking them off the stage; a number already on
   * the list keeps its entry. How many rows were moved, and the numbers newly listed.
   */
  async move(
    accountId: string,
    limit: number,
    entry: { addedBy: string; addedAt: Date },
  ): Promise<{ rows: number; added: string[] }> {
    const { rows } = await this.pool.query<{ rows: number; added: string[] }>({
      ...MOVE,
      values: [accountId, limit, entry.addedBy, entry.addedAt],
    });
    return rows[0]!;
  }

  /** The ids of the waiting calls to `numbers` that the list of `accountId` covers. */
  async waitingCallsTo(accountId: string, numbers: string[]): Promise<string[]> {
    if (numbers.length === 0) return [];
    const { rows } = await this.pool.query<{ id: string }>({ ...WAITING_CALLS, values: [accountId, numbers] });
    return rows.map((r) => r.id);
  }
}

/** The pool side of the do-not-call lists: the Prisma repository and an import's writes, which are never in a transaction. */
export class PooledDoNotCallRepository extends DoNotCallRepository {
  /** An import's writes, each a statement of its own on the pool. */
  readonly imports: DoNotCallImportRepository;

  constructor(driver: PoolDriver) {
    super(driver);
    this.imports = new DoNotCallImportRepository(driver);
  }
}
