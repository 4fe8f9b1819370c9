-- calls.agency_id: the agency at the top of the call's account (the agency itself for its own calls, a client's
-- agency for a client's), kept like users.agency_id and agents.agency_id. An agency's Calls list reads its scope as
-- one range of an (agency_id, ...) index (20261129100002-03) instead of merging one range per client: with a thousand
-- clients that placed calls, the merge descended a thousand times per page (bench:scale's tenants, 1.9x the empty
-- database's first page and 4.2x its name search).
--
-- Filled at insert by a trigger from the account's row (one primary-key probe, on a row an acceptance has just
-- locked), whatever writes the call: this release's acceptance, a replica of the release before during a rolling
-- deploy, a bulk load. Existing calls are filled by the next migration, in batches. An account never changes agency,
-- so the value never changes after insert. No foreign key: checking it would read every call under a lock, and the
-- account's own (account_id, ON DELETE CASCADE) already removes the call with its account.

-- AlterTable: a nullable column without a default changes no row.
ALTER TABLE "calls" ADD COLUMN "agency_id" UUID;

CREATE FUNCTION "oct_calls_agency_before_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."agency_id" IS NULL THEN
    SELECT coalesce(a."agency_id", a."id") INTO NEW."agency_id" FROM "accounts" a WHERE a."id" = NEW."account_id";
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER "calls_agency_before_insert" BEFORE INSERT ON "calls"
  FOR EACH ROW EXECUTE FUNCTION "oct_calls_agency_before_insert"();
