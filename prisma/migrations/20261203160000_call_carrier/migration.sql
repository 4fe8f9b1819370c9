-- The carrier each call's current attempt was dialled with (issue 50.3): `carrier` is the dialer's kind, and
-- `carrier_account_id` the account whose own carrier it was (account_carriers.account_id: the call's account, or its
-- agency), null for the environment's carrier (DIALER). Callbacks check their signature with that carrier's
-- credentials, live-call changes go through its dialer, and the simulated dialer advances only its own calls. Both
-- are written with the dial's intent (src/storage/call-claims.ts); existing rows keep nulls: the environment's.
-- No foreign key: an account's carrier row may be replaced or removed while its calls live on (the key of a callback
-- is then looked up and not found, and the callback refused), and a key would be checked on every intent's update.
ALTER TABLE "calls" ADD COLUMN "carrier" TEXT,
                    ADD COLUMN "carrier_account_id" UUID,
                    -- NOT VALID: every existing row is null, so no scan of the table under its lock is needed.
                    ADD CONSTRAINT "calls_carrier_check"
                      CHECK ("carrier" IN ('simulated', 'twilio', 'telnyx', 'signalwire')) NOT VALID;
