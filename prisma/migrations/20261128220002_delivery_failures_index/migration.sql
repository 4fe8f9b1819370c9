-- The Overview's failed attempts of an endpoint: its deliveries with a failure since a moment, from this index only.
-- Partial: a delivery that never failed (nearly all of them) has no entry, so it costs the worker nothing. Online.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_deliveries_endpoint_id_last_failure_at_idx" ON "webhook_deliveries" ("endpoint_id", "last_failure_at") WHERE "last_failure_at" IS NOT NULL;
