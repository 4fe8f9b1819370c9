-- The metadata key a user shows as a column of the Calls list (null: none). A key the trigger accepts: 1 to 40
-- characters. The Calls list's search indexes (issue 24) follow, each an online migration of its own
-- (docs/operations.md, "Index builds on large tables run online"), so calls keep being accepted while they build.
ALTER TABLE "users" ADD COLUMN "calls_metadata_column" text
  CONSTRAINT "users_calls_metadata_column_length" CHECK (char_length("calls_metadata_column") BETWEEN 1 AND 40);
