-- The exact-number index of the call history is read by nothing once the number filter is a prefix (the prefix
-- index serves a whole number too): dropped, so the new search indexes add less to every call's insert. Online.
DROP INDEX CONCURRENTLY IF EXISTS "calls_account_id_phone_number_created_at_id_idx";
