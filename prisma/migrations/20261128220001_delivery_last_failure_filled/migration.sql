-- last_failure_at of the deliveries whose attempts failed in the last day (the Overview looks back an hour; older
-- failures are never asked for, and a delivery's next failed attempt sets it). One pass over webhook_attempts
-- (it has no index by time), locking only the deliveries it updates, so the worker and acceptances go on meanwhile.
UPDATE "webhook_deliveries" d SET "last_failure_at" = f.at
  FROM (SELECT a."delivery_id", max(a."started_at") AS at FROM "webhook_attempts" a
         WHERE a."started_at" >= now() - interval '1 day'
           AND (a."response_status" IS NULL OR a."response_status" < 200 OR a."response_status" >= 300)
         GROUP BY a."delivery_id") f
 WHERE d."id" = f."delivery_id";
