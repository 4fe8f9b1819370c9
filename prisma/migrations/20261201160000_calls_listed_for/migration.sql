-- calls.listed_for_account_id: the client a call is also listed for, when an agency's key triggered it on one of that
-- client's agents (PRODUCT.md, "Agency keys and clients' agents"); null otherwise. The call stays the key's account's
-- (account_id) for everything tied to the key: its concurrency limit, its queue, its idempotency and its webhook
-- endpoint. The client's Calls list, call page and `callctl calls list` read these rows besides its own, through the
-- partial indexes of the next migrations (built online). No foreign key, as calls.agency_id has none: checking one
-- would read every call under a lock; the value is the agent's owner at acceptance and never changes.
--
-- oct_accept_call_v3: v2's acceptance (20261125011000) with the listed account as one more parameter: it is stored
-- with the call, and its do-not-call list is checked with the key's account's and its agency's, in the same probe of
-- the unique index (account_id, phone_number). v2 stays for replicas of the previous version during a rolling deploy
-- (their calls are listed for the key's account alone, as before); a later migration may drop it.

-- AlterTable: a nullable column without a default changes no row.
ALTER TABLE "calls" ADD COLUMN "listed_for_account_id" UUID;

CREATE FUNCTION "oct_accept_call_v3"(
  p_account uuid, p_agency uuid, p_call uuid, p_event uuid, p_agent uuid, p_phone text, p_from text, p_name text,
  p_email text, p_metadata json, p_not_before timestamptz, p_expires_at timestamptz, p_now timestamptz,
  p_updated_at timestamptz, p_max_waiting int, p_idempotency_record uuid, p_response_status int,
  p_response_body jsonb, p_scheduled_at timestamptz, p_timezone text, p_timezone_source "timezone_source",
  p_listed_for uuid
) RETURNS int LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  waiting int;
BEGIN
  IF EXISTS (SELECT 1 FROM "do_not_call_entries"
              WHERE "account_id" IN (p_account, p_agency, p_listed_for) AND "phone_number" = p_phone) THEN
    RETURN -2;
  END IF;
  -- One acceptance at a time per account, so the queue bound is exact rather than approximate. A row locked after
  -- a wait is read as last committed: the count includes every call committed while we waited.
  SELECT "waiting_calls" INTO waiting FROM "accounts" WHERE "id" = p_account FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'account % does not exist', p_account USING ERRCODE = 'foreign_key_violation';
  END IF;
  IF waiting >= p_max_waiting THEN
    RETURN waiting;
  END IF;
  INSERT INTO "calls" ("id", "account_id", "agent_id", "phone_number", "from_number", "name", "email", "metadata", "status",
                       "not_before", "expires_at", "created_at", "updated_at", "scheduled_at", "timezone", "timezone_source",
                       "listed_for_account_id")
  VALUES (p_call, p_account, p_agent, p_phone, p_from, p_name, p_email, p_metadata, 'initiated', p_not_before,
          p_expires_at, p_now, p_updated_at, p_scheduled_at, p_timezone, p_timezone_source, p_listed_for);
  INSERT INTO "call_events" ("id", "call_id", "to_status", "source", "occurred_at")
  VALUES (p_event, p_call, 'initiated', 'api', p_now);
  IF p_idempotency_record IS NOT NULL THEN
    -- Exactly our reservation, still without a response: one taken over meanwhile (abandoned after 60 s) rolls the
    -- whole acceptance back, so a key never answers for a call it did not create.
    UPDATE "idempotency_records" SET "response_status" = p_response_status, "response_body" = p_response_body
     WHERE "id" = p_idempotency_record AND "response_status" IS NULL;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'idempotency reservation % was taken over', p_idempotency_record USING ERRCODE = 'serialization_failure';
    END IF;
  END IF;
  RETURN -1;
END $$;
