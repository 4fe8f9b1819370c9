-- The endpoints of an agency and its clients (20261129200000), for the Overview's endpoints in trouble. Online: the
-- delivery worker disables an endpoint that answers 410, and the dashboard writes endpoints.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_endpoints_agency_id_idx" ON "webhook_endpoints" ("agency_id");
