-- The agency's twin of calls_account_outcome_idx (20261202080001): an agency's Calls list of one outcome, its whole
-- scope newest first.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_agency_outcome_idx" ON "calls" ("agency_id", "outcome", "created_at", "id") WHERE "outcome" IS NOT NULL;
