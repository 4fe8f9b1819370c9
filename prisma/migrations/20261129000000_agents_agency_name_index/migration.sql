-- An agency's agents by name, from the index: the Calls list's agent menu (the first 51 by name, to learn whether
-- there are more than a menu shows) read every agent of the agency and sorted them, a thousand rows for an agency of
-- a thousand clients. Online: a plain build would hold the agents' writes (and the triggers that read agents) while
-- it runs.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "agents_agency_id_name_id_idx" ON "agents" ("agency_id", "name", "id");
