-- The dashboard's delivery log: an endpoint's deliveries newest first, keyset on (created_at, id). Without it the
-- page read every delivery of the endpoint and sorted them (test/storage/no-sequential-scans.test.ts found the
-- sequential scan). Hand-written to match schema.prisma exactly (test/storage/schema-matches-migrations.test.ts).
-- Plain CREATE INDEX, as migrations run in a transaction: on a large existing table it holds off writes to that
-- table while it builds.

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_created_at_id_idx" ON "webhook_deliveries"("endpoint_id", "created_at", "id");
