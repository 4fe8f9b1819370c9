-- Each dashboard user's own time zone (PRODUCT.md, "The agent on the line": times shown in the user's zone, set on
-- the Account page): a canonical IANA name as src/domain/time-zones.ts spells it; null: never chosen, shown in UTC.
-- Nullable without a default: no row is rewritten.

ALTER TABLE "users" ADD COLUMN "timezone" TEXT;
