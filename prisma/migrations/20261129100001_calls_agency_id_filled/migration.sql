-- agency_id of the calls written before 20261129100000, in batches of 5,000 in id order (ids are UUIDv7: time
-- order), each committed on its own, so that a call is locked for one batch at most and an upgrade of millions of
-- calls goes on while acceptances, the dispatcher and the webhook worker do. The runner sends it outside a transaction
-- (one DO block that commits, like a CONCURRENTLY step; src/storage/migrate.ts). A batch locks its calls in id order
-- first, as every writer that locks several calls does, and one that still meets a deadlock is done again. After a
-- failure or a kill mid-way, the next start runs it again from the first call still without one: what was committed
-- stays. The calls inserted meanwhile get theirs from the trigger.
DO $$
DECLARE
  lo uuid := (SELECT c."id" FROM "calls" c WHERE c."agency_id" IS NULL ORDER BY c."id" LIMIT 1);
  hi uuid;
BEGIN
  WHILE lo IS NOT NULL LOOP
    SELECT b."id" INTO hi FROM (SELECT c."id" FROM "calls" c WHERE c."id" >= lo ORDER BY c."id" LIMIT 5000) b
     ORDER BY b."id" DESC LIMIT 1;
    BEGIN
      PERFORM 1 FROM "calls" c WHERE c."id" BETWEEN lo AND hi AND c."agency_id" IS NULL ORDER BY c."id" FOR NO KEY UPDATE;
      UPDATE "calls" c SET "agency_id" = coalesce(a."agency_id", a."id") FROM "accounts" a
       WHERE c."id" BETWEEN lo AND hi AND c."agency_id" IS NULL AND a."id" = c."account_id";
    EXCEPTION WHEN deadlock_detected THEN
      hi := NULL;
    END;
    COMMIT;
    IF hi IS NOT NULL THEN
      lo := (SELECT c."id" FROM "calls" c WHERE c."id" > hi ORDER BY c."id" LIMIT 1);
    END IF;
  END LOOP;
END $$;
