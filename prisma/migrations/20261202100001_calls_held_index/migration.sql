-- The Overview's and the Calls list's calls held by the calling rules (20261202100000), by account. Partial: only
-- waiting calls the rules hold have an entry, so other calls' writes never touch it.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_held" ON "calls" ("account_id") WHERE "status" = 'initiated' AND "held_by" IS NOT NULL;
