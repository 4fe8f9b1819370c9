-- (account_id, ended_at) served the Overview's outcomes of today, read from call_outcome_days since 20261128100000;
-- nothing reads it now (retention uses (ended_at); a lookup by account alone has four indexes led by account_id).
-- Dropped: every version of every call (its insert, each update of its status) had an entry in it, while the two
-- partial indexes above take one only for the versions of a waiting call. Online.
DROP INDEX CONCURRENTLY IF EXISTS "calls_account_id_ended_at_idx";
