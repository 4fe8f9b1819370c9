-- An agency's Calls list, newest first, keyset on (created_at, id): its whole scope as one range (20261129100000).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_agency_id_created_at_id_idx" ON "calls" ("agency_id", "created_at", "id");
