-- The dashboard's Overview (src/storage/overview.ts) reads recent rows only: today's outcomes as a range of
-- (account_id, ended_at), and an endpoint's health (its last success, its failed attempts of the last hour) as a range
-- of (endpoint_id, status, last_attempt_at). Hand-written to match schema.prisma exactly
-- (test/storage/schema-matches-migrations.test.ts).

-- CreateIndex
CREATE INDEX "calls_account_id_ended_at_idx" ON "calls"("account_id", "ended_at");

-- (endpoint_id, status) becomes (endpoint_id, status, last_attempt_at): the same entries in the same order for a
-- status, so what used the old index uses this one, and the Overview's reads are index ranges too.
DROP INDEX "webhook_deliveries_endpoint_id_status_idx";

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_status_last_attempt_at_idx" ON "webhook_deliveries"("endpoint_id", "status", "last_attempt_at");
