// The ids the service issues for new rows (their shape, and the check of an id given to it, are schemas/uuid.ts).
import { v7 as uuidv7 } from 'uuid';

/**
 * The id of a new row of the tables that grow with every call: calls, call_events, webhook_deliveries and
 * webhook_attempts. A UUIDv7 (RFC 9562: the creation time in milliseconds, then 74 random bits), so the rows written
 * together sit together in their primary keys and in the indexes led by a call's id. With random (v4) ids every row of
 * a 500-call claim landed on its own page of indexes that, with years of history, are far larger than memory: read from
 * disk and written in full into the WAL after each checkpoint (docs/performance.md#time-ordered-row-ids). The time it
 * shows is the row's `created_at`, which the API and the webhooks show anyway.
 */
export function newRowId(): string {
  return uuidv7();
}
