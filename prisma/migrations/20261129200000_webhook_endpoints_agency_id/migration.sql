-- webhook_endpoints.agency_id: the agency at the top of the endpoint's account (the agency itself for its own
-- endpoint, a client's agency for a client's), as calls.agency_id (20261129100000). An agency's Overview finds its
-- endpoints in trouble (disabled, or failing in the last hour) from one range of an index by it (20261129200001)
-- instead of probing the endpoint of each of its clients: a thousand probes, about a third of the ranking
-- statement's time for bench:scale's agency of 1,001 accounts, whether or not they have an endpoint.
--
-- Filled at insert by the trigger function calls use (it sets NEW.agency_id from NEW.account_id's row when not
-- given), whatever writes the endpoint. An account never changes agency, so the value never changes after insert.
-- The table has at most one row per account: the existing endpoints are filled here, in this transaction, whose
-- ALTER TABLE keeps writers out until it commits.

-- AlterTable: a nullable column without a default changes no row.
ALTER TABLE "webhook_endpoints" ADD COLUMN "agency_id" UUID;

CREATE TRIGGER "webhook_endpoints_agency_before_insert" BEFORE INSERT ON "webhook_endpoints"
  FOR EACH ROW EXECUTE FUNCTION "oct_calls_agency_before_insert"();

UPDATE "webhook_endpoints" e SET "agency_id" = coalesce(a."agency_id", a."id")
  FROM "accounts" a WHERE a."id" = e."account_id";
