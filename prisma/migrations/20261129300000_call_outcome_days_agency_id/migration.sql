-- call_outcome_days.agency_id: the agency at the top of the counter's account (the agency itself for its own
-- counters), as calls.agency_id (20261129100000). An agency's Overview ranks its clients partly by their outcomes of
-- the day: it read every account's counters of the day and kept its own accounts' by a hash of its thousand ids
-- (about a tenth of the ranking statement on bench:scale's agency of 1,001 accounts); with the agency on each row
-- and an index by agency and day, it reads one range of its own.
--
-- Set at insert by the trigger function calls and webhook endpoints use (it sets NEW.agency_id from NEW.account_id's
-- row when not given), whatever writes the counter: oct_add_call_outcomes (20261128100000) and the triggers on calls
-- do not change. An INSERT ... ON CONFLICT fires it for every counter it proposes (one primary-key probe of the
-- account per counter a call's end changes); an upsert of an existing counter keeps the agency it has, and an account
-- never changes agency.
--
-- The table holds at most two days of counters (a few rows per account that ended calls): the ALTER TABLE locks it
-- first, so that no counter is written between the fill and the commit, and the index is built in this transaction
-- (milliseconds; CONCURRENTLY would buy nothing on so small a table, and cannot run in a transaction).

ALTER TABLE "call_outcome_days" ADD COLUMN "agency_id" UUID;

CREATE TRIGGER "call_outcome_days_agency_before_insert" BEFORE INSERT ON "call_outcome_days"
  FOR EACH ROW EXECUTE FUNCTION "oct_calls_agency_before_insert"();

UPDATE "call_outcome_days" o SET "agency_id" = coalesce(a."agency_id", a."id")
  FROM "accounts" a WHERE a."id" = o."account_id";

-- Every counter has one from here on (its account's row exists: the foreign key).
ALTER TABLE "call_outcome_days" ALTER COLUMN "agency_id" SET NOT NULL;

CREATE INDEX "call_outcome_days_agency_id_day_idx" ON "call_outcome_days"("agency_id", "day");
