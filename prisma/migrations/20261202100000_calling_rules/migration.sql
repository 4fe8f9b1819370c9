-- Calling within the law (PRODUCT.md, "Calling within the law"; issue 48). Every column is nullable or defaulted
-- without a rewrite: an existing deployment keeps today's behaviour (the rules are off until an agency switches them
-- on).

-- The calling-rules settings (schemas/compliance.ts): on an agency, whether the rules are on, the rule sets, its own
-- narrower hours, the cap per callee and whether consent is required; on a client, its own narrower hours only.
-- Null: nothing set (off for an agency, nothing added for a client).
ALTER TABLE "accounts" ADD COLUMN "calling_rules" JSONB;

-- An agent whose calls need the trigger's consent record.
ALTER TABLE "agents" ADD COLUMN "consent_required" BOOLEAN NOT NULL DEFAULT false;

-- The trigger's recipient_region (ISO 3166-2, as the rules spell it) and consent (as validated); the decision
-- record of each attempt ([{ attempt, checked_at, verdict, ... }], oldest first: the last is the current attempt's);
-- and why a waiting call is held by the rules ('calling_rules' or 'cap'; null: not held by them).
ALTER TABLE "calls" ADD COLUMN "recipient_region" TEXT,
                    ADD COLUMN "consent" JSONB,
                    ADD COLUMN "compliance" JSONB,
                    ADD COLUMN "held_by" TEXT,
                    -- NOT VALID: every existing row is null, so no scan of the table under its lock is needed.
                    ADD CONSTRAINT "calls_held_by_check" CHECK ("held_by" IN ('calling_rules', 'cap')) NOT VALID;

-- Every dial, per number, for the caps per callee: counted over a rolling 24 hours (or 7 days) across the agency or
-- one account, under a transaction-level advisory lock per (scope, number) so that two replicas never both place the
-- call over the cap. Written for every dial, rules on or off, so that a cap switched on counts the dials before it;
-- rows older than 8 days are pruned by the dispatcher's housekeeping.
CREATE TABLE "callee_dials" (
    "call_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "agency_id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "phone_number" TEXT NOT NULL,
    "dialed_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "callee_dials_pkey" PRIMARY KEY ("call_id", "attempt")
);
CREATE INDEX "callee_dials_agency" ON "callee_dials" ("agency_id", "phone_number", "dialed_at");
CREATE INDEX "callee_dials_account" ON "callee_dials" ("account_id", "phone_number", "dialed_at");
CREATE INDEX "callee_dials_dialed_at" ON "callee_dials" ("dialed_at");
