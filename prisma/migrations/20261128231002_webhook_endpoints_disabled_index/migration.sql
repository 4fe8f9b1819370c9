-- The disabled webhook endpoints: the Overview shows an account whose endpoint is disabled first, even one that never
-- had a call, without reading every endpoint of an agency's clients. Partial: enabled endpoints (nearly all) have no
-- entry. Online: the delivery worker disables an endpoint that answers 410.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_endpoints_disabled_idx" ON "webhook_endpoints" ("account_id") WHERE NOT "enabled";
