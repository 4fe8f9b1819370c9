-- The plain waiting calls by (account_id, not_before) (20261128200000): calls_waiting_due holds them with the others,
-- and the Overview's range of due plain calls is read there. Dropped online.
DROP INDEX CONCURRENTLY IF EXISTS "calls_waiting_by_not_before";
