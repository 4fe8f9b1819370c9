-- The dispatcher's expiry sweep (src/storage/call-claims.ts, oct_expired, four times a second in every process):
-- waiting calls past their time to live. It read every entry of the waiting range of (status, not_before), dead ones
-- included: after 100,000 waiting calls were dialled it took 97 ms a sweep (bench:scale, pg_stat_statements). Ordered
-- by expires_at and holding only waiting calls, this index's range is the expired calls alone (a claimed call's
-- dead entry expires tomorrow, outside it). Partial, so hand-written; schema.prisma cannot declare it
-- (test/storage/schema-matches-migrations.test.ts leaves partial indexes out, as calls_active_by_account).

-- CreateIndex
CREATE INDEX "calls_expiry_of_waiting" ON "calls"("expires_at") WHERE "status" = 'initiated';
