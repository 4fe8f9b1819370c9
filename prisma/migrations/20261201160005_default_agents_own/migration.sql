-- An account's default agent is one of its own agents (PRODUCT.md, "Accounts, keys, agents"). Until now an agency
-- could pick one of its clients' agents, and then every trigger of its key without agent_id called with the client's
-- caller ID. Such defaults are cleared: the account has no default agent (a trigger without agent_id gets 400 "No
-- agent specified and no default agent configured") until someone picks one of its own, rather than keep calling
-- with another account's number. Each change is written to the account's audit log as a default_agent_changed entry by
-- the service, naming the agent it was. The accounts table is small (one row per tenant): one statement.
WITH cleared AS (
  UPDATE "accounts" a SET "default_agent_id" = NULL, "updated_at" = now()
    FROM "agents" g
   WHERE g."id" = a."default_agent_id" AND g."account_id" <> a."id"
  RETURNING a."id", coalesce(a."agency_id", a."id") AS agency_id, g."id" AS agent_id, g."name" AS agent_name
)
INSERT INTO "audit_log" ("id", "account_id", "agency_id", "actor_kind", "action", "detail", "created_at")
SELECT gen_random_uuid(), c."id", c.agency_id, 'service', 'default_agent_changed',
       jsonb_build_object('agent_id', NULL, 'previous_agent_id', c.agent_id, 'previous_agent_name', c.agent_name,
                          'reason', 'The default agent belonged to another account: an account''s default agent is one of its own.'),
       now()
  FROM cleared c;
