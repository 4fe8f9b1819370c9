-- Per account and quarter hour of the last 48 hours, how many of its calls ended in it with each outcome, beside the
-- per-UTC-day counters (call_outcome_days, 20261128100000, 20261202090000) and kept by the same trigger functions:
-- the dashboard shows times in each user's own zone (users.timezone, 20261202080003), and the Overview's "today" (an
-- account's outcomes, the clients' ranking) is the viewer's local day, from their local midnight to now. Every IANA
-- zone in use is a whole number of quarter hours from UTC (+05:30, +05:45, +08:45, -09:30 included), so each local
-- midnight is the start of a quarter and a local day is a whole range of quarters; a local midnight is never more
-- than 24 hours back, so 48 hours keep today and yesterday in every zone. The keys are the day counters' ('completed',
-- the failure reason, 'agent:<label>'); each quarter lies within one UTC day, so a day's counters are its quarters'
-- sum while both are kept.
--
-- The functions keep their names, their statement-level shape and their lock order: each change a statement makes is
-- grouped by account, UTC day, quarter (null beyond the 48 hours) and outcome; oct_add_call_outcomes upserts the day
-- counters (summed per day) in key order, then the quarter counters in key order, so that two statements ending calls
-- of the same accounts take the counters' locks in one order, then removes, without waiting, the accounts' rows of 0
-- and their rows older than the kept span: days before the 31st, quarters older than 49 hours (an hour past the 48
-- counted: a quarter is never removed while a change can still reach it). Each row's agency_id comes from the agency
-- trigger, as the day counters' does (20261129300000). The table holds at most 49 hours of the accounts that end
-- calls (at most 196 quarters each, per outcome); the Overview reads a range of its primary key (account_id, quarter)
-- or of (agency_id, quarter).

CREATE TABLE "call_outcome_quarters" (
    "account_id" UUID NOT NULL,
    "agency_id" UUID NOT NULL,
    "quarter" TIMESTAMPTZ(3) NOT NULL,
    "outcome" TEXT NOT NULL,
    "calls" INTEGER NOT NULL,

    CONSTRAINT "call_outcome_quarters_pkey" PRIMARY KEY ("account_id","quarter","outcome")
);

ALTER TABLE "call_outcome_quarters" ADD CONSTRAINT "call_outcome_quarters_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE INDEX "call_outcome_quarters_agency_id_quarter_idx" ON "call_outcome_quarters"("agency_id", "quarter");

CREATE TRIGGER "call_outcome_quarters_agency_before_insert" BEFORE INSERT ON "call_outcome_quarters"
  FOR EACH ROW EXECUTE FUNCTION "oct_calls_agency_before_insert"();

-- Where the counted quarters begin: the quarter 48 hours back (quarters from 00:00 UTC, whatever the session's zone).
CREATE FUNCTION "oct_outcome_quarters_since"() RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT date_bin('15 minutes', now() - interval '48 hours', timestamptz '2000-01-01 00:00:00+00')
$$;

-- The quarter hour `at` lies in.
CREATE FUNCTION "oct_outcome_quarter"("at" timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT date_bin('15 minutes', "at", timestamptz '2000-01-01 00:00:00+00')
$$;

CREATE OR REPLACE FUNCTION "oct_add_call_outcomes"(changes jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  first_kept date := (now() AT TIME ZONE 'UTC')::date - 30;
  first_quarter timestamptz := now() - interval '49 hours';
BEGIN
  INSERT INTO "call_outcome_days" AS o ("account_id", "day", "outcome", "calls")
  SELECT c.account_id, c.day, c.outcome, sum(c.n)::int
    FROM jsonb_to_recordset(changes) AS c(account_id uuid, day date, outcome text, n int)
   GROUP BY c.account_id, c.day, c.outcome HAVING sum(c.n) <> 0
   ORDER BY c.account_id, c.day, c.outcome
  ON CONFLICT ("account_id", "day", "outcome") DO UPDATE SET "calls" = o."calls" + excluded."calls";
  INSERT INTO "call_outcome_quarters" AS o ("account_id", "quarter", "outcome", "calls")
  SELECT c.account_id, c.quarter, c.outcome, c.n
    FROM jsonb_to_recordset(changes) AS c(account_id uuid, quarter timestamptz, outcome text, n int)
   WHERE c.quarter IS NOT NULL
   ORDER BY c.account_id, c.quarter, c.outcome
  ON CONFLICT ("account_id", "quarter", "outcome") DO UPDATE SET "calls" = o."calls" + excluded."calls";
  DELETE FROM "call_outcome_days" o
   WHERE ("account_id", "day", "outcome") IN (
     SELECT d."account_id", d."day", d."outcome" FROM "call_outcome_days" d
      WHERE d."account_id" = ANY(ARRAY(SELECT DISTINCT c.account_id FROM jsonb_to_recordset(changes) AS c(account_id uuid)))
        AND (d."calls" = 0 OR d."day" < first_kept)
        FOR UPDATE SKIP LOCKED);
  DELETE FROM "call_outcome_quarters" o
   WHERE ("account_id", "quarter", "outcome") IN (
     SELECT q."account_id", q."quarter", q."outcome" FROM "call_outcome_quarters" q
      WHERE q."account_id" = ANY(ARRAY(SELECT DISTINCT c.account_id FROM jsonb_to_recordset(changes) AS c(account_id uuid)))
        AND (q."calls" = 0 OR q."quarter" < first_quarter)
        FOR UPDATE SKIP LOCKED);
END $$;

CREATE OR REPLACE FUNCTION "oct_calls_outcomes_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes jsonb;
BEGIN
  SELECT jsonb_agg(c) INTO changes FROM (
    SELECT n."account_id", (n."ended_at" AT TIME ZONE 'UTC')::date AS day,
           CASE WHEN n."ended_at" >= "oct_outcome_quarters_since"() THEN "oct_outcome_quarter"(n."ended_at") END AS quarter,
           k.outcome, count(*)::int AS n
      FROM new_calls n CROSS JOIN LATERAL (VALUES (coalesce(n."failure_reason"::text, n."status"::text)),
        (CASE WHEN n."status" = 'completed' THEN 'agent:' || n."outcome" END)) AS k(outcome)
     WHERE k.outcome IS NOT NULL AND n."status" IN ('completed', 'failed') AND n."ended_at" >= "oct_outcomes_since"()
     GROUP BY 1, 2, 3, 4) c;
  IF changes IS NOT NULL THEN
    PERFORM "oct_add_call_outcomes"(changes);
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "oct_calls_outcomes_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes jsonb;
BEGIN
  SELECT jsonb_agg(c) INTO changes FROM (
    SELECT account_id, day, quarter, outcome, sum(d)::int AS n FROM (
      SELECT o."account_id", (o."ended_at" AT TIME ZONE 'UTC')::date AS day,
             CASE WHEN o."ended_at" >= "oct_outcome_quarters_since"() THEN "oct_outcome_quarter"(o."ended_at") END AS quarter,
             k.outcome, -1 AS d
        FROM old_calls o CROSS JOIN LATERAL (VALUES (coalesce(o."failure_reason"::text, o."status"::text)),
        (CASE WHEN o."status" = 'completed' THEN 'agent:' || o."outcome" END)) AS k(outcome)
       WHERE k.outcome IS NOT NULL AND o."status" IN ('completed', 'failed') AND o."ended_at" >= "oct_outcomes_since"()
      UNION ALL
      SELECT n."account_id", (n."ended_at" AT TIME ZONE 'UTC')::date,
             CASE WHEN n."ended_at" >= "oct_outcome_quarters_since"() THEN "oct_outcome_quarter"(n."ended_at") END,
             k.outcome, 1
        FROM new_calls n CROSS JOIN LATERAL (VALUES (coalesce(n."failure_reason"::text, n."status"::text)),
        (CASE WHEN n."status" = 'completed' THEN 'agent:' || n."outcome" END)) AS k(outcome)
       WHERE k.outcome IS NOT NULL AND n."status" IN ('completed', 'failed') AND n."ended_at" >= "oct_outcomes_since"()
    ) moved GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0) c;
  IF changes IS NOT NULL THEN
    PERFORM "oct_add_call_outcomes"(changes);
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "oct_calls_outcomes_after_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes jsonb;
BEGIN
  SELECT jsonb_agg(c) INTO changes FROM (
    SELECT o."account_id", (o."ended_at" AT TIME ZONE 'UTC')::date AS day,
           CASE WHEN o."ended_at" >= "oct_outcome_quarters_since"() THEN "oct_outcome_quarter"(o."ended_at") END AS quarter,
           k.outcome, -count(*)::int AS n
      FROM old_calls o CROSS JOIN LATERAL (VALUES (coalesce(o."failure_reason"::text, o."status"::text)),
        (CASE WHEN o."status" = 'completed' THEN 'agent:' || o."outcome" END)) AS k(outcome)
     WHERE k.outcome IS NOT NULL AND o."status" IN ('completed', 'failed') AND o."ended_at" >= "oct_outcomes_since"()
     GROUP BY 1, 2, 3, 4) c;
  IF changes IS NOT NULL THEN
    PERFORM "oct_add_call_outcomes"(changes);
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION "oct_calls_outcomes_after_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "call_outcome_days";
  DELETE FROM "call_outcome_quarters";
  RETURN NULL;
END $$;

-- The count: the calls that ended in the counted quarters (a range of the ended_at index), calls locked first (the
-- locks file) so that none changes meanwhile; the agency trigger sets each row's agency.
INSERT INTO "call_outcome_quarters" ("account_id", "quarter", "outcome", "calls")
SELECT c."account_id", "oct_outcome_quarter"(c."ended_at"), k.outcome, count(*)::int
  FROM "calls" c CROSS JOIN LATERAL (VALUES (coalesce(c."failure_reason"::text, c."status"::text)),
        (CASE WHEN c."status" = 'completed' THEN 'agent:' || c."outcome" END)) AS k(outcome)
 WHERE k.outcome IS NOT NULL AND c."status" IN ('completed', 'failed') AND c."ended_at" >= "oct_outcome_quarters_since"()
 GROUP BY 1, 2, 3;
