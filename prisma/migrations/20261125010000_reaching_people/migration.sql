-- Reaching people (issue 23): agents' retry policy, voicemail setting and whose local time their windows are read
-- in; calls' attempts, answering-machine verdict, schedule and time zone; do-not-call lists. Every new column has a
-- default or is nullable, so existing rows keep today's behaviour (one attempt, no detection, the agent's zone).
-- Hand-written to match schema.prisma exactly (test/storage/schema-matches-migrations.test.ts). ADD VALUE runs inside
-- the migration's transaction (PostgreSQL 12+); nothing here uses the new values before it commits.

-- AlterEnum
ALTER TYPE "failure_reason" ADD VALUE 'voicemail';
ALTER TYPE "failure_reason" ADD VALUE 'do_not_call';

-- CreateEnum
CREATE TYPE "window_timezone" AS ENUM ('agent', 'recipient');
CREATE TYPE "voicemail_policy" AS ENUM ('off', 'hang_up', 'leave_message');
CREATE TYPE "answered_by" AS ENUM ('human', 'machine', 'unknown');
CREATE TYPE "timezone_source" AS ENUM ('request', 'country', 'agent');

-- AlterTable
ALTER TABLE "agents"
    ADD COLUMN "window_timezone" "window_timezone" NOT NULL DEFAULT 'agent',
    ADD COLUMN "max_attempts" INTEGER NOT NULL DEFAULT 1,
    ADD COLUMN "retry_on" JSONB NOT NULL DEFAULT '[]',
    ADD COLUMN "retry_waits_minutes" JSONB NOT NULL DEFAULT '[30, 120, 1440]',
    ADD COLUMN "voicemail" "voicemail_policy" NOT NULL DEFAULT 'off',
    ADD COLUMN "voicemail_message" TEXT;

-- AlterTable
ALTER TABLE "calls"
    ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1,
    ADD COLUMN "attempt_outcomes" JSONB NOT NULL DEFAULT '[]',
    ADD COLUMN "next_attempt_at" TIMESTAMPTZ(3),
    ADD COLUMN "answered_by" "answered_by",
    ADD COLUMN "voicemail_left" BOOLEAN,
    ADD COLUMN "scheduled_at" TIMESTAMPTZ(3),
    ADD COLUMN "timezone" TEXT,
    ADD COLUMN "timezone_source" "timezone_source";

-- CreateTable
CREATE TABLE "do_not_call_entries" (
    "id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "phone_number" TEXT NOT NULL,
    "reason" TEXT,
    "added_by" TEXT NOT NULL,
    "added_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "do_not_call_entries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "do_not_call_entries_account_id_phone_number_key" ON "do_not_call_entries"("account_id", "phone_number");

-- AddForeignKey
ALTER TABLE "do_not_call_entries" ADD CONSTRAINT "do_not_call_entries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
