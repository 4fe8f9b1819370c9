-- The delivery log at Svix's level (issue 24.3): each attempt keeps the first 2 KB of the receiver's answer (bytes,
-- cut on a UTF-8 boundary; the sender reads no more of a long body than it must) and whether it was cut short. The
-- columns go with their rows under retention, as before. Hand-written to match schema.prisma exactly
-- (test/storage/schema-matches-migrations.test.ts). ADD COLUMN with a constant default changes only the catalog
-- (PostgreSQL 11+): no row is rewritten. The log's status index is the next migration, an online one.

-- AlterTable
ALTER TABLE "webhook_attempts" ADD COLUMN     "response_body" TEXT,
ADD COLUMN     "response_body_truncated" BOOLEAN NOT NULL DEFAULT false;
