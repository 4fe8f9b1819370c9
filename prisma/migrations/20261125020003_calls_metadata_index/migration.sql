-- The Calls list's metadata search: metadata stays `json` (the client's text, key order kept, for the detail view);
-- the index is on its jsonb form, and a search asks `metadata::jsonb @> '{"crm_id": 123}'`, which jsonb_path_ops
-- answers from the index. Built online (CONCURRENTLY, outside a transaction).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "calls_metadata_jsonb_idx" ON "calls" USING gin (("metadata"::jsonb) jsonb_path_ops);
