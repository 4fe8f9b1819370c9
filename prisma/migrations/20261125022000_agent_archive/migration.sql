-- Archiving agents (issue 24): an archived agent keeps its row (its calls point at it) but new triggers cannot use it
-- (400 "Agent not found") and it cannot be an account's default agent. NULL: in use. Hand-written to match
-- schema.prisma exactly (test/storage/schema-matches-migrations.test.ts).

-- AlterTable
ALTER TABLE "agents" ADD COLUMN "archived_at" TIMESTAMPTZ(3);
