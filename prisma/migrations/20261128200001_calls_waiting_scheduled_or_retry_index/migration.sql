-- The rest of the Overview's breakdown: an account's waiting calls that have a scheduled_at or wait for a retry, with
-- the columns the breakdown compares with now, so that they are counted from the index alone. Built online.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_waiting_scheduled_or_retry" ON "calls" ("account_id") INCLUDE ("not_before", "next_attempt_at", "scheduled_at") WHERE "status" = 'initiated' AND ("next_attempt_at" IS NOT NULL OR "scheduled_at" IS NOT NULL);
