-- The carrier an account dials through (PRODUCT.md, "Placing calls"): an agency's, or a client's own when its agency
-- lets clients choose. Without a row the account uses its agency's, and an agency without one the environment's
-- (DIALER). The credentials are one JSON object sealed with SECRETS_KEY (src/storage/secrets.ts); `shown` holds the
-- parts that are not secret (account SID, connection id, space, project) to show again; `numbers` the numbers the
-- carrier listed for the account when the credentials were checked (null: it does not list them).
CREATE TABLE account_carriers (
  account_id  uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  provider    text NOT NULL CHECK (provider IN ('twilio', 'telnyx', 'signalwire')),
  credentials text NOT NULL,
  shown       jsonb NOT NULL,
  numbers     jsonb,
  checked_at  timestamptz(3) NOT NULL,
  updated_at  timestamptz(3) NOT NULL DEFAULT now()
);

-- Whether an agency's clients may set a carrier of their own (only an agency's row may say so).
ALTER TABLE accounts ADD COLUMN clients_choose_carrier boolean NOT NULL DEFAULT false;
ALTER TABLE accounts ADD CONSTRAINT accounts_clients_choose_carrier_agency
  CHECK (NOT clients_choose_carrier OR kind = 'agency');
