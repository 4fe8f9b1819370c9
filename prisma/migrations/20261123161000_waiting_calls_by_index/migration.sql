-- The waiting-calls counter's update (the triggers of 20261121080000), found by pg_stat_statements in bench:scale:
-- with 10,000 accounts every acceptance spent 11 ms in it, as its `id IN (subquery)` lock and its join with
-- jsonb_each_text (estimated at 100 rows) were planned as a sequential scan of accounts: a cost that grew with the
-- number of accounts. Both now look the accounts up by their primary key (`id = ANY(array)`), whatever the table's
-- size. Same signature and meaning: replaced in place.
CREATE OR REPLACE FUNCTION "oct_add_waiting_calls"(changes jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[] := ARRAY(SELECT key::uuid FROM jsonb_each_text(changes) ORDER BY key::uuid);
BEGIN
  PERFORM 1 FROM "accounts" WHERE "id" = ANY(ids) ORDER BY "id" FOR NO KEY UPDATE;
  UPDATE "accounts" a SET "waiting_calls" = a."waiting_calls" + (changes ->> a."id"::text)::int WHERE a."id" = ANY(ids);
END $$;
