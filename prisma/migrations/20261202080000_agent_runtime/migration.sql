-- The agent on the line (PRODUCT.md, "The agent on the line"): how each agent hands its answered calls to the
-- voice-agent runtime (a media stream or a SIP destination, with static parameters or headers), what the runtime
-- reports back (call_results, one per call; its outcome label copied to calls.outcome for the Calls list), and the
-- key the service signs the runtime's context tokens with (signing_keys, made on first start, shared by replicas).
-- Every new column is nullable or has a constant default: no row is rewritten.

-- The voice-agent runtime as an author of audit entries: a number the callee asked never to be called again, added
-- to the do-not-call list from the runtime's result (opt_out). Added, not used, in this transaction (PostgreSQL 12+).
ALTER TYPE "audit_actor" ADD VALUE 'agent';

CREATE TYPE "handoff_kind" AS ENUM ('stream', 'sip');

ALTER TABLE "agents"
  ADD COLUMN "handoff" "handoff_kind" NOT NULL DEFAULT 'stream',
  ADD COLUMN "stream_url" TEXT,
  ADD COLUMN "stream_parameters" JSONB NOT NULL DEFAULT '[]',
  ADD COLUMN "sip_uri" TEXT,
  ADD COLUMN "sip_headers" JSONB NOT NULL DEFAULT '[]';

ALTER TABLE "calls" ADD COLUMN "outcome" TEXT;

CREATE TABLE "call_results" (
  "call_id" UUID NOT NULL,
  "attempt" INTEGER NOT NULL,
  "body" JSON NOT NULL,
  "digest" TEXT NOT NULL,
  "in_event" BOOLEAN NOT NULL DEFAULT false,
  "received_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "call_results_pkey" PRIMARY KEY ("call_id"),
  CONSTRAINT "call_results_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE TABLE "signing_keys" (
  "purpose" TEXT NOT NULL,
  "key" TEXT NOT NULL,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "signing_keys_pkey" PRIMARY KEY ("purpose")
);
