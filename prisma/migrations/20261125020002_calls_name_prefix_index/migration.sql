-- The Calls list's name search: a prefix, any case, named calls only. Built online (CONCURRENTLY, outside a
-- transaction).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_account_id_name_prefix_idx" ON "calls" ("account_id", lower("name") text_pattern_ops) WHERE "name" IS NOT NULL;
