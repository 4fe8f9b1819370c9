-- Every waiting call by (account_id, not_before), with what the dispatcher and the Overview compare with now: an
-- account has a due call when the first entry of its range up to now has not expired, one index probe whatever the
-- size of its queue. The dispatcher's due-accounts query (storage/call-claims.ts, oct_lock_due_accounts) read every
-- waiting call of every account with a queue through (account_id, status, created_at) on each poll, four times a
-- second: 185 ms a poll with 100,000 calls waiting for their window or their scheduled time (bench:scale, queue).
-- It replaces the plain waiting calls' index (20261128200000, dropped next), whose range the Overview reads here with
-- the same filter. Built online.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_waiting_due" ON "calls" ("account_id", "not_before") INCLUDE ("expires_at", "next_attempt_at", "scheduled_at") WHERE "status" = 'initiated';
