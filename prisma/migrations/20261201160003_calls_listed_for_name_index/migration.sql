-- The name search over the calls listed for a client, as calls_account_id_name_newest_idx (20261128010000) is an
-- account's own: a name prefix in any case, newest last within each name. Partial: listed, named calls only.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_listed_for_name_newest_idx" ON "calls" ("listed_for_account_id", lower("name") text_pattern_ops, "created_at", "id") INCLUDE ("name") WHERE "listed_for_account_id" IS NOT NULL AND "name" IS NOT NULL;
