-- Users' emails are unique per agency (an agency and its clients), no longer across the whole service: inviting an
-- address that another agency uses must answer as for a fresh one (issue 21, point 4). users.agency_id is the
-- agency at the top of the user's account, kept like audit_log.agency_id. And a third kind of one-time link: the
-- e-mailed password reset.

ALTER TABLE "users" ADD COLUMN "agency_id" UUID;
UPDATE "users" AS u SET "agency_id" = COALESCE(a."agency_id", a."id") FROM "accounts" AS a WHERE a."id" = u."account_id";
ALTER TABLE "users" ALTER COLUMN "agency_id" SET NOT NULL;

-- DropIndex
DROP INDEX "users_email_key";

-- CreateIndex
CREATE UNIQUE INDEX "users_agency_id_email_key" ON "users"("agency_id", "email");

-- CreateIndex
CREATE INDEX "users_email_idx" ON "users"("email");

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_agency_id_fkey" FOREIGN KEY ("agency_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AlterEnum
ALTER TYPE "token_purpose" ADD VALUE 'password_reset';
