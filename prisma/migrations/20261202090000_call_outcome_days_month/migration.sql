-- The Overview's chart of the last 7 and 30 days (issue 47): the outcome counters (20261128100000) keep 31 UTC days
-- (today and the 30 before) instead of two, and count the voice-agent runtime's outcomes too: a completed call whose
-- result has an outcome label (calls.outcome, 20261202080000) adds to 'agent:<label>' as well as to 'completed' (the
-- labels are [a-z0-9_.-], so no failure reason or status starts so). The chart then reads at most 31 days of a few
-- rows per account, never the calls: an account ending 50,000 calls a day would otherwise count 1.5 million.
--
-- The triggers and the functions keep their names and their statement-level shape; only what they count (each ended
-- call's outcome, and for a completed call with the runtime's label 'agent:<label>' besides: the keys k of each row)
-- and how far back change. The counters are recounted here from the calls that ended since the first kept day (a range of the
-- ended_at index), calls locked first (the locks file) so that no call changes meanwhile.

CREATE OR REPLACE FUNCTION "oct_outcomes_since"() RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT (date_trunc('day', now() AT TIME ZONE 'UTC') - interval '30 days') AT TIME ZONE 'UTC'
$$;

CREATE OR REPLACE FUNCTION "oct_add_call_outcomes"(changes jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  first_kept date := (now() AT TIME ZONE 'UTC')::date - 30;
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
        AND (d."calls" = 0 OR d."day" < first_kept)
        FOR UPDATE SKIP LOCKED);
END $$;

CREATE OR REPLACE FUNCTION "oct_calls_outcomes_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes jsonb;
BEGIN
  SELECT jsonb_agg(c) INTO changes FROM (
    SELECT n."account_id", (n."ended_at" AT TIME ZONE 'UTC')::date AS day, k.outcome, count(*)::int AS n
      FROM new_calls n CROSS JOIN LATERAL (VALUES (coalesce(n."failure_reason"::text, n."status"::text)),
        (CASE WHEN n."status" = 'completed' THEN 'agent:' || n."outcome" END)) AS k(outcome)
     WHERE k.outcome IS NOT NULL AND n."status" IN ('completed', 'failed') AND n."ended_at" >= "oct_outcomes_since"()
     GROUP BY 1, 2, 3) c;
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
    SELECT account_id, day, outcome, sum(d)::int AS n FROM (
      SELECT o."account_id", (o."ended_at" AT TIME ZONE 'UTC')::date AS day, k.outcome, -1 AS d
        FROM old_calls o CROSS JOIN LATERAL (VALUES (coalesce(o."failure_reason"::text, o."status"::text)),
        (CASE WHEN o."status" = 'completed' THEN 'agent:' || o."outcome" END)) AS k(outcome)
       WHERE k.outcome IS NOT NULL AND o."status" IN ('completed', 'failed') AND o."ended_at" >= "oct_outcomes_since"()
      UNION ALL
      SELECT n."account_id", (n."ended_at" AT TIME ZONE 'UTC')::date, k.outcome, 1
        FROM new_calls n CROSS JOIN LATERAL (VALUES (coalesce(n."failure_reason"::text, n."status"::text)),
        (CASE WHEN n."status" = 'completed' THEN 'agent:' || n."outcome" END)) AS k(outcome)
       WHERE k.outcome IS NOT NULL AND n."status" IN ('completed', 'failed') AND n."ended_at" >= "oct_outcomes_since"()
    ) moved GROUP BY 1, 2, 3 HAVING sum(d) <> 0) c;
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
    SELECT o."account_id", (o."ended_at" AT TIME ZONE 'UTC')::date AS day, k.outcome, -count(*)::int AS n
      FROM old_calls o CROSS JOIN LATERAL (VALUES (coalesce(o."failure_reason"::text, o."status"::text)),
        (CASE WHEN o."status" = 'completed' THEN 'agent:' || o."outcome" END)) AS k(outcome)
     WHERE k.outcome IS NOT NULL AND o."status" IN ('completed', 'failed') AND o."ended_at" >= "oct_outcomes_since"()
     GROUP BY 1, 2, 3) c;
  IF changes IS NOT NULL THEN
    PERFORM "oct_add_call_outcomes"(changes);
  END IF;
  RETURN NULL;
END $$;

-- The recount: every kept day, both kinds of counter (the agency_id trigger sets each row's agency).
DELETE FROM "call_outcome_days";

INSERT INTO "call_outcome_days" ("account_id", "day", "outcome", "calls")
SELECT c."account_id", (c."ended_at" AT TIME ZONE 'UTC')::date, k.outcome, count(*)::int
  FROM "calls" c CROSS JOIN LATERAL (VALUES (coalesce(c."failure_reason"::text, c."status"::text)),
        (CASE WHEN c."status" = 'completed' THEN 'agent:' || c."outcome" END)) AS k(outcome)
 WHERE k.outcome IS NOT NULL AND c."status" IN ('completed', 'failed') AND c."ended_at" >= "oct_outcomes_since"()
 GROUP BY 1, 2, 3;
