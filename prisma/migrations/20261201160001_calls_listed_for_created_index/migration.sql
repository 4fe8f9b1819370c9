-- The calls listed for a client (20261201160000), newest first, keyset on (created_at, id): the Calls list's walk of
-- them beside the client's own. Partial: only such calls have an entry, so other calls' writes never touch it.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_listed_for_created_idx" ON "calls" ("listed_for_account_id", "created_at", "id") WHERE "listed_for_account_id" IS NOT NULL;
