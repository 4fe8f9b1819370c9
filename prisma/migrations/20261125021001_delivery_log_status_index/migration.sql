-- The delivery log filtered by status (issue 24.3): an endpoint's deliveries of one status newest first, keyset on
-- (created_at, id), from one index range instead of reading past every delivery of the other statuses. An online
-- migration of its own (docs/operations.md, "Index builds on large tables run online"): built CONCURRENTLY, outside a
-- transaction, so deliveries keep being written while it builds. Hand-written to match schema.prisma exactly
-- (test/storage/schema-matches-migrations.test.ts).

-- CreateIndex
CREATE INDEX CONCURRENTLY "webhook_deliveries_endpoint_id_status_created_at_id_idx" ON "webhook_deliveries"("endpoint_id", "status", "created_at", "id");
