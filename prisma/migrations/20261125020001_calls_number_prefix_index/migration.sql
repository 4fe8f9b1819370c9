-- The Calls list's number-prefix search: byte-wise (text_pattern_ops) so that a prefix is a range of the index
-- whatever the database's collation. Built online (CONCURRENTLY, outside a transaction).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_account_id_phone_number_prefix_idx" ON "calls" ("account_id", "phone_number" text_pattern_ops);
