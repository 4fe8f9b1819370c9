-- Roles per account (PRODUCT.md, "People and roles"; issue 50): owner, admin, member, viewer (src/domain/roles.ts).
-- Existing users become owners: before roles every user could do everything. The default stays 'owner' so that a
-- replica of the previous release, inserting a user without a role during a rolling upgrade, makes what it made
-- before; this release always names the role. Adding a column with a constant default rewrites no row.
CREATE TYPE "user_role" AS ENUM ('owner', 'admin', 'member', 'viewer');

ALTER TABLE "users" ADD COLUMN "role" "user_role" NOT NULL DEFAULT 'owner';

