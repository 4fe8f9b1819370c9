-- An agency's clients by name, from the index: the Overview lists the first few of them without reading and sorting
-- every client (a thousand for a large agency). Online: acceptances write accounts (the waiting counter), and a plain
-- build would hold them while it runs.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "accounts_agency_id_name_id_idx" ON "accounts" ("agency_id", "name", "id");
