-- The number-prefix search over the calls listed for a client, as calls_account_id_phone_number_prefix_idx
-- (20261125020001) is an account's own: byte-wise, so that a prefix is a range whatever the collation. Partial.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_listed_for_phone_number_prefix_idx" ON "calls" ("listed_for_account_id", "phone_number" text_pattern_ops) WHERE "listed_for_account_id" IS NOT NULL;
