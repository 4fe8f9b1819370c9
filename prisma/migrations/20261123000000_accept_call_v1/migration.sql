-- Call metadata kept exactly as sent: `json` stores the text as given (key order included), where `jsonb` reorders
-- keys. Nothing queries inside metadata, so nothing needs jsonb's operators or indexes. Rows stored before this
-- migration keep the order jsonb gave them.
ALTER TABLE "calls" ALTER COLUMN "metadata" DROP DEFAULT;
ALTER TABLE "calls" ALTER COLUMN "metadata" TYPE json USING "metadata"::json;
ALTER TABLE "calls" ALTER COLUMN "metadata" SET DEFAULT '{}';

-- The one acceptance of a trigger, one round trip for every request (with or without Idempotency-Key): under the
-- account's row lock it reads the waiting count (kept exact by the triggers of 20261121080000), stores the call and
-- its first event, and completes the idempotency reservation, all in the caller's statement, so they commit
-- together. Returns the waiting count when the queue is full (nothing stored), else -1. Versioned name: a change of
-- signature or meaning is a new function in a new migration, so replicas of two versions can run side by side.
-- search_path is pinned to the schema the migration ran in, so a caller's search_path cannot redirect it.
CREATE FUNCTION "oct_accept_call_v1"(
  p_account uuid, p_call uuid, p_event uuid, p_agent uuid, p_phone text, p_from text, p_name text, p_email text,
  p_metadata json, p_not_before timestamptz, p_expires_at timestamptz, p_now timestamptz, p_updated_at timestamptz,
  p_max_waiting int, p_idempotency_record uuid, p_response_status int, p_response_body jsonb
) RETURNS int LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  waiting int;
BEGIN
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
                       "not_before", "expires_at", "created_at", "updated_at")
  VALUES (p_call, p_account, p_agent, p_phone, p_from, p_name, p_email, p_metadata, 'initiated', p_not_before,
          p_expires_at, p_now, p_updated_at);
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
