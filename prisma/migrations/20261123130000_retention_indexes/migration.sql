-- The data lifecycle (src/storage/retention.ts): each range a retention pass deletes from is read from an index, oldest
-- first, and the cascades it sets off find their rows by index. Hand-written to match schema.prisma exactly
-- (test/storage/schema-matches-migrations.test.ts). Plain CREATE INDEX, as migrations run in a transaction: on a large
-- existing table it holds off writes to that table while it builds.

-- Finished calls by the time they ended (null for live calls, which no range reaches).
-- CreateIndex
CREATE INDEX "calls_ended_at_idx" ON "calls"("ended_at");

-- A deleted call event's deliveries (ON DELETE CASCADE); without it every deleted event scanned webhook_deliveries.
-- CreateIndex
CREATE INDEX "webhook_deliveries_call_event_id_idx" ON "webhook_deliveries"("call_event_id");

-- Finished deliveries by the time they finished (null while pending).
-- CreateIndex
CREATE INDEX "webhook_deliveries_completed_at_idx" ON "webhook_deliveries"("completed_at");

-- Audit entries by age.
-- CreateIndex
CREATE INDEX "audit_log_created_at_idx" ON "audit_log"("created_at");
