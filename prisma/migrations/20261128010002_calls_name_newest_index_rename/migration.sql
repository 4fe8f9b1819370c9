-- The name index keeps the name the search, its tests and the benches know it by (a rename takes no lock that
-- blocks reads or writes of calls).
ALTER INDEX IF EXISTS "calls_account_id_name_newest_idx" RENAME TO "calls_account_id_name_prefix_idx";
