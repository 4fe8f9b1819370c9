-- The calls listed for a client by agent, newest first: the twin of (account_id, agent_id, created_at, id) for the
-- Calls list's agent filter over them (20261201160000). Partial, as calls_listed_for_created_idx.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_listed_for_agent_idx" ON "calls" ("listed_for_account_id", "agent_id", "created_at", "id") WHERE "listed_for_account_id" IS NOT NULL;
