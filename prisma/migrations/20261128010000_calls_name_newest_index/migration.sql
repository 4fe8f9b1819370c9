-- The Calls list's name search, ordered newest first within each name: (account_id, lower(name) text_pattern_ops,
-- created_at, id), named calls only. A prefix is still a range of it, read from the index alone (the name included
-- because the planner wants the column under lower(name)); and each name's newest matches are its last entries, so
-- that a search merges the newest of each name instead of sorting every match. It replaces
-- calls_account_id_name_prefix_idx (dropped by the next migration, then given its name). Built online.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_account_id_name_newest_idx" ON "calls" ("account_id", lower("name") text_pattern_ops, "created_at", "id") INCLUDE ("name") WHERE "name" IS NOT NULL;
