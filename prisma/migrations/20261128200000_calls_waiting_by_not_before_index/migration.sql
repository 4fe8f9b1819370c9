-- The Overview's breakdown of an account's waiting calls (storage/calls.ts, oct_live_call_counts) without reading
-- every waiting call: the plain ones (no scheduled_at, no retry pending) by (account_id, not_before), so that those
-- whose window has opened are a short range and those still waiting for it are the counter's remainder. Each waiting
-- call is in this index or in the next migration's, never both. Built online.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_waiting_by_not_before" ON "calls" ("account_id", "not_before") WHERE "status" = 'initiated' AND "next_attempt_at" IS NULL AND "scheduled_at" IS NULL;
