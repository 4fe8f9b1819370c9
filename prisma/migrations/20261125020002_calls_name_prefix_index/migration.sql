-- The Calls list's name search: a prefix, any case, named calls only. It includes the name, the time and the id, so
-- that a search's newest matches are read from the index alone (an index-only scan: the name because the planner
-- wants the column under lower(name)). Built online (CONCURRENTLY, outside a transaction).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_account_id_name_prefix_idx" ON "calls" ("account_id", lower("name") text_pattern_ops) INCLUDE ("name", "created_at", "id") WHERE "name" IS NOT NULL;
