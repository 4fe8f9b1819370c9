-- The dashboard's call history (src/storage/call-history.ts): per account, newest first, keyset on (created_at, id),
-- optionally one agent's or one destination number's calls. Each index below hands a page over in that order, so a
-- page reads its 51 rows whatever the account's size (bench/dashboard-calls.ts). Hand-written to match schema.prisma
-- exactly (test/storage/schema-matches-migrations.test.ts).

-- (account_id, created_at) becomes (account_id, created_at, id): the same entries plus the tie-breaker, so that a
-- page that starts inside a run of equal created_at is an index range too. Nothing else used the old one alone.
DROP INDEX "calls_account_id_created_at_idx";

-- CreateIndex
CREATE INDEX "calls_account_id_created_at_id_idx" ON "calls"("account_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "calls_account_id_agent_id_created_at_id_idx" ON "calls"("account_id", "agent_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "calls_account_id_phone_number_created_at_id_idx" ON "calls"("account_id", "phone_number", "created_at", "id");
