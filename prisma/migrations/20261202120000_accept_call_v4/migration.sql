-- oct_accept_call_v4: v3's acceptance (20261201160000) that also stores the trigger's recipient_region and consent
-- (calls.recipient_region, calls.consent: 20261202100000) with the call, in the same statement, so that the
-- dispatcher's first claim, and every event, see them (a later UPDATE would race a replica's claim). v3 stays for
-- replicas of the previous version during a rolling deploy (their calls carry neither); a later migration may drop it.

CREATE FUNCTION "oct_accept_call_v4"(
  p_account uuid, p_agency uuid, p_call uuid, p_event uuid, p_agent uuid, p_phone text, p_from text, p_name text,
  p_email text, p_metadata json, p_not_before timestamptz, p_expires_at timestamptz, p_now timestamptz,
  p_updated_at timestamptz, p_max_waiting int, p_idempotency_record uuid, p_response_status int,
  p_response_body jsonb, p_scheduled_at timestamptz, p_timezone text, p_timezone_source "timezone_source",
  p_listed_for uuid, p_recipient_region text, p_consent jsonb
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
                       "listed_for_account_id", "recipient_region", "consent")
  VALUES (p_call, p_account, p_agent, p_phone, p_from, p_name, p_email, p_metadata, 'initiated', p_not_before,
          p_expires_at, p_now, p_updated_at, p_scheduled_at, p_timezone, p_timezone_source, p_listed_for,
          p_recipient_region, p_consent);
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
