-- Per account and UTC day, how many of its calls ended that day with each outcome ('completed' or the failure
-- reason), kept by triggers on calls as the waiting counter is (20261121080000), so that the Overview reads an
-- account's outcomes of today from a few rows instead of counting the day's calls: bench:scale's history Overview
-- counted some 5,000 calls of one account at every load and every live refresh (1.9x the empty database), and an
-- account ending 50,000 calls a day would count those by the evening.
--
-- Only today and yesterday are kept (UTC, by the database's clock): the Overview reads today, and a change to a call
-- that ended before yesterday changes nothing here. The triggers delete an account's older rows when they write its
-- new ones, so the table holds at most two days of each account that ends calls.
--
-- Statement-level, like the waiting counter's: one upsert per (account, day, outcome) a statement changes, in key
-- order, so that two statements ending calls of the same accounts take the counters' locks in one order. The
-- triggers' names (calls_waiting_then_outcomes_*) sort after the waiting counter's (calls_waiting_after_*), and
-- PostgreSQL fires a table's triggers of one event in name order: a statement that locks accounts (the waiting
-- counter) does so before it locks counters, as the dispatcher's claim (accounts first, then its calls) does.

CREATE TABLE "call_outcome_days" (
    "account_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "outcome" TEXT NOT NULL,
    "calls" INTEGER NOT NULL,

    CONSTRAINT "call_outcome_days_pkey" PRIMARY KEY ("account_id","day","outcome")
);

ALTER TABLE "call_outcome_days" ADD CONSTRAINT "call_outcome_days_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Where the kept days begin: yesterday, 00:00 UTC (whatever the session's time zone).
CREATE FUNCTION "oct_outcomes_since"() RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT (date_trunc('day', now() AT TIME ZONE 'UTC') - interval '1 day') AT TIME ZONE 'UTC'
$$;

-- Adds `changes` (rows of account_id, day, outcome, n) to the counters: upserts in key order, then removes the rows
-- that reached 0 and the accounts' rows of days before yesterday. The removal never waits: a row another transaction
-- holds is left for the next change (the rows of 0 are this statement's own, locked by its upsert).
CREATE FUNCTION "oct_add_call_outcomes"(changes jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  yesterday date := (now() AT TIME ZONE 'UTC')::date - 1;
BEGIN
  INSERT INTO "call_outcome_days" AS o ("account_id", "day", "outcome", "calls")
  SELECT c.account_id, c.day, c.outcome, c.n
    FROM jsonb_to_recordset(changes) AS c(account_id uuid, day date, outcome text, n int)
   ORDER BY c.account_id, c.day, c.outcome
  ON CONFLICT ("account_id", "day", "outcome") DO UPDATE SET "calls" = o."calls" + excluded."calls";
  DELETE FROM "call_outcome_days" o
   WHERE ("account_id", "day", "outcome") IN (
     SELECT d."account_id", d."day", d."outcome" FROM "call_outcome_days" d
      WHERE d."account_id" = ANY(ARRAY(SELECT DISTINCT c.account_id FROM jsonb_to_recordset(changes) AS c(account_id uuid)))
        AND (d."calls" = 0 OR d."day" < yesterday)
        FOR UPDATE SKIP LOCKED);
END $$;

-- What each set of calls adds to the counters: its calls that ended today or yesterday, by account, day and outcome.
CREATE FUNCTION "oct_calls_outcomes_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes jsonb;
BEGIN
  SELECT jsonb_agg(c) INTO changes FROM (
    SELECT "account_id", ("ended_at" AT TIME ZONE 'UTC')::date AS day, coalesce("failure_reason"::text, "status"::text) AS outcome,
           count(*)::int AS n
      FROM new_calls
     WHERE "status" IN ('completed', 'failed') AND "ended_at" >= "oct_outcomes_since"()
     GROUP BY 1, 2, 3) c;
  IF changes IS NOT NULL THEN
    PERFORM "oct_add_call_outcomes"(changes);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION "oct_calls_outcomes_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes jsonb;
BEGIN
  SELECT jsonb_agg(c) INTO changes FROM (
    SELECT account_id, day, outcome, sum(d)::int AS n FROM (
      SELECT "account_id", ("ended_at" AT TIME ZONE 'UTC')::date AS day, coalesce("failure_reason"::text, "status"::text) AS outcome, -1 AS d
        FROM old_calls WHERE "status" IN ('completed', 'failed') AND "ended_at" >= "oct_outcomes_since"()
      UNION ALL
      SELECT "account_id", ("ended_at" AT TIME ZONE 'UTC')::date, coalesce("failure_reason"::text, "status"::text), 1
        FROM new_calls WHERE "status" IN ('completed', 'failed') AND "ended_at" >= "oct_outcomes_since"()
    ) moved GROUP BY 1, 2, 3 HAVING sum(d) <> 0) c;
  IF changes IS NOT NULL THEN
    PERFORM "oct_add_call_outcomes"(changes);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION "oct_calls_outcomes_after_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes jsonb;
BEGIN
  SELECT jsonb_agg(c) INTO changes FROM (
    SELECT "account_id", ("ended_at" AT TIME ZONE 'UTC')::date AS day, coalesce("failure_reason"::text, "status"::text) AS outcome,
           -count(*)::int AS n
      FROM old_calls
     WHERE "status" IN ('completed', 'failed') AND "ended_at" >= "oct_outcomes_since"()
     GROUP BY 1, 2, 3) c;
  IF changes IS NOT NULL THEN
    PERFORM "oct_add_call_outcomes"(changes);
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION "oct_calls_outcomes_after_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "call_outcome_days";
  RETURN NULL;
END $$;

-- Writers of calls wait for this transaction (CREATE TRIGGER locks the table), so the initial counts are exact. They
-- read the calls that ended since yesterday began: a range of the ended_at index.
LOCK TABLE "calls" IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO "call_outcome_days" ("account_id", "day", "outcome", "calls")
SELECT "account_id", ("ended_at" AT TIME ZONE 'UTC')::date, coalesce("failure_reason"::text, "status"::text), count(*)::int
  FROM "calls"
 WHERE "status" IN ('completed', 'failed') AND "ended_at" >= "oct_outcomes_since"()
 GROUP BY 1, 2, 3;

CREATE TRIGGER "calls_waiting_then_outcomes_after_insert" AFTER INSERT ON "calls"
  REFERENCING NEW TABLE AS new_calls FOR EACH STATEMENT EXECUTE FUNCTION "oct_calls_outcomes_after_insert"();
CREATE TRIGGER "calls_waiting_then_outcomes_after_update" AFTER UPDATE ON "calls"
  REFERENCING OLD TABLE AS old_calls NEW TABLE AS new_calls FOR EACH STATEMENT EXECUTE FUNCTION "oct_calls_outcomes_after_update"();
CREATE TRIGGER "calls_waiting_then_outcomes_after_delete" AFTER DELETE ON "calls"
  REFERENCING OLD TABLE AS old_calls FOR EACH STATEMENT EXECUTE FUNCTION "oct_calls_outcomes_after_delete"();
CREATE TRIGGER "calls_waiting_then_outcomes_after_truncate" AFTER TRUNCATE ON "calls"
  FOR EACH STATEMENT EXECUTE FUNCTION "oct_calls_outcomes_after_truncate"();
