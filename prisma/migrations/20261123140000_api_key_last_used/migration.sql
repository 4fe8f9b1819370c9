-- When an API key last authenticated a request (to the minute: plugins/key-usage.ts writes it at most once a minute
-- per key and process, after the response). Shown on the dashboard's API & Webhooks page. Hand-written to match
-- schema.prisma exactly (test/storage/schema-matches-migrations.test.ts).

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "last_used_at" TIMESTAMPTZ(3);
