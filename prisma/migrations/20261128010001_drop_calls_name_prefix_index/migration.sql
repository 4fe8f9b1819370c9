-- The name index of 20261125020002 is read by nothing once calls_account_id_name_newest_idx holds the same entries
-- in a more useful order: dropped, so that a call's insert keeps one name index to maintain. Online.
DROP INDEX CONCURRENTLY IF EXISTS "calls_account_id_name_prefix_idx";
