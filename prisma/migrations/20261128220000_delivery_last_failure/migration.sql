-- When a delivery's last failed attempt began (an attempt that got no 2xx: an error, a timeout or another status);
-- null while none failed. The Overview counts an endpoint's failed attempts of the last hour from the deliveries it
-- has in this range (migration 20261128220002) instead of from every delivery attempted in the hour: a busy healthy
-- endpoint's thousands of deliveries are not read. A new nullable column without a default: no rewrite, a brief lock.
ALTER TABLE "webhook_deliveries" ADD COLUMN "last_failure_at" TIMESTAMPTZ(3);
