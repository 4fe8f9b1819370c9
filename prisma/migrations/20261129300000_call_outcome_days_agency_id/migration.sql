-- call_outcome_days.agency_id: the agency at the top of the counter's account (the agency itself for its own
-- counters), as calls.agency_id (20261129100000). An agency's Overview ranks its clients partly by their outcomes of
-- the day: it read every account's counters of the day and kept its own accounts' by a hash of its thousand ids
-- (about a tenth of the ranking statement on bench:scale's agency of 1,001 accounts); with the agency on each row
-- and an index by agency and day, it reads one range of its own.
--
-- The counters' one writer, oct_add_call_outcomes (20261128100000; the triggers on calls call it), now sets the
-- agency from the account's row (its primary key: one probe per counter a statement changes, which already locks and
-- updates that counter) when it inserts a counter. An account never changes agency, so an upsert of an existing
-- counter leaves it as it is. The triggers themselves do not change.
--
-- The table holds at most two days of counters (a few rows per account that ended calls): the ALTER TABLE locks it
-- first, so that no counter is written between the fill and the commit, and the index is built in this transaction
-- (milliseconds; CONCURRENTLY would buy nothing on so small a table, and cannot run in a transaction).

ALTER TABLE "call_outcome_days" ADD COLUMN "agency_id" UUID;

CREATE OR REPLACE FUNCTION "oct_add_call_outcomes"(changes jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  yesterday date := (now() AT TIME ZONE 'UTC')::date - 1;
BEGIN
  INSERT INTO "call_outcome_days" AS o ("account_id", "agency_id", "day", "outcome", "calls")
  SELECT c.account_id, (SELECT coalesce(a."agency_id", a."id") FROM "accounts" a WHERE a."id" = c.account_id),
         c.day, c.outcome, c.n
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

UPDATE "call_outcome_days" o SET "agency_id" = coalesce(a."agency_id", a."id")
  FROM "accounts" a WHERE a."id" = o."account_id";

-- Every counter has one from here on (its account's row exists: the foreign key).
ALTER TABLE "call_outcome_days" ALTER COLUMN "agency_id" SET NOT NULL;

CREATE INDEX "call_outcome_days_agency_id_day_idx" ON "call_outcome_days"("agency_id", "day");
