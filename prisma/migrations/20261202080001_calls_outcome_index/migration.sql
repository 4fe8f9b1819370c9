-- The Calls list filtered by the runtime's outcome (20261202080000), an account's calls of one outcome newest first,
-- keyset on (created_at, id). Partial: only calls with a result have an entry, so other calls' writes never touch it.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_account_outcome_idx" ON "calls" ("account_id", "outcome", "created_at", "id") WHERE "outcome" IS NOT NULL;
