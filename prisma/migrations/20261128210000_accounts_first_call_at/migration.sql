-- accounts.first_call_at: the time of the oldest call an account was ever given (null: it has had none), kept by a
-- trigger on calls as the waiting counter is (20261121080000). The Calls list of an agency of many clients reads each
-- client's newest call to merge them: one index descent per client, 1,001 for an agency of 1,000 clients even when
-- most of them have never placed a call (bench:scale's tenants, 2x the empty database). An account has no call older
-- than its first_call_at, so one whose first_call_at is null or after the page's bound has no call on that page and is
-- not looked at: the list reads the agency's accounts (a range of accounts_agency_id_idx) and descends only into those
-- that had calls by then. Never lowered by a delete: a bound, not a count, so retention leaves it alone.
--
-- Statement-level, after the waiting counter's trigger (PostgreSQL fires a table's triggers of one event in name
-- order: calls_waiting_after_insert, then calls_waiting_first_call_after_insert, then the outcome counters'), so that
-- an acceptance locks its account once, there. Only an account's first call (or one given an older time, as a bulk
-- load does) writes the row; any later insert reads it and leaves it.

-- AlterTable
ALTER TABLE "accounts" ADD COLUMN "first_call_at" TIMESTAMPTZ(3);

-- Lowers the accounts' first_call_at to the oldest of the inserted calls where it is later (or null). The rows to
-- write are locked in id order first, so that two statements inserting calls of the same accounts cannot deadlock.
CREATE FUNCTION "oct_calls_first_call_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "accounts" a
    JOIN (SELECT "account_id", min("created_at") AS at FROM new_calls GROUP BY "account_id") n ON a."id" = n."account_id"
   WHERE a."first_call_at" IS NULL OR a."first_call_at" > n.at
   ORDER BY a."id" FOR NO KEY UPDATE OF a;
  UPDATE "accounts" a SET "first_call_at" = n.at
    FROM (SELECT "account_id", min("created_at") AS at FROM new_calls GROUP BY "account_id") n
   WHERE a."id" = n."account_id" AND (a."first_call_at" IS NULL OR a."first_call_at" > n.at);
  RETURN NULL;
END $$;

-- Writers of calls wait for this transaction (CREATE TRIGGER locks the table), so the initial values are exact. Each
-- account's oldest call is one descent of the (account_id, created_at, id) index.
LOCK TABLE "calls" IN SHARE ROW EXCLUSIVE MODE;

UPDATE "accounts" a SET "first_call_at" = f.at
  FROM (SELECT x."id", (SELECT min(c."created_at") FROM "calls" c WHERE c."account_id" = x."id") AS at FROM "accounts" x) f
 WHERE a."id" = f."id" AND f.at IS NOT NULL;

CREATE TRIGGER "calls_waiting_first_call_after_insert" AFTER INSERT ON "calls"
  REFERENCING NEW TABLE AS new_calls FOR EACH STATEMENT EXECUTE FUNCTION "oct_calls_first_call_after_insert"();
