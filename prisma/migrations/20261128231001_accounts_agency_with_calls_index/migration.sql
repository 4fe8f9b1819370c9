-- An agency's clients that ever had a call (first_call_at, kept by the trigger of 20261128210000): only they can have
-- calls under way or ended today, so the Overview reads these and leaves the others (often most of a large agency's)
-- alone. Partial: an account with no call has no entry. Online, as the index before it.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "accounts_agency_id_with_calls_idx" ON "accounts" ("agency_id") WHERE "first_call_at" IS NOT NULL;
