// The shape of every id the service issues (a UUID, any version, either case), written once: as a JSON Schema
// pattern for schemas, and as the RegExp that the `uuid` format and isUuid test with.
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const UUID = new RegExp(UUID_PATTERN);

/** Whether `value` has that shape: anything else is refused before reaching the database. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** An id as PostgreSQL writes a uuid (lower case): an id typed or linked in upper case then matches the stored one. */
export function canonicalUuid(id: string): string {
  return id.toLowerCase();
}
