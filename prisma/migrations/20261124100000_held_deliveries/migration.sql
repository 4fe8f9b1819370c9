-- A delivery of an event that happened while its endpoint was disabled (or that was pending when the endpoint was
-- disabled) is kept as `held`, with the reason, and sent when the endpoint is enabled again (issue 21.2). A status of
-- its own, not `pending`: held rows stay out of the pending range of (status, next_attempt_at) the worker's claim
-- reads. Hand-written to match schema.prisma exactly (test/storage/schema-matches-migrations.test.ts). ADD VALUE runs
-- inside the migration's transaction (PostgreSQL 12+); nothing here uses the new value before it commits.

-- AlterEnum
ALTER TYPE "delivery_status" ADD VALUE 'held';

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN "held_reason" TEXT;
