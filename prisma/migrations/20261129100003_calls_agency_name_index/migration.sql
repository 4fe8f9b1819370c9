-- An agency's name search, as calls_account_id_name_newest_idx (20261128010000) is an account's: a name prefix in any
-- case, newest last within each name, over the agency's whole scope as one range (20261129100000).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_agency_id_name_newest_idx" ON "calls" ("agency_id", lower("name") text_pattern_ops, "created_at", "id") INCLUDE ("name") WHERE "name" IS NOT NULL;
