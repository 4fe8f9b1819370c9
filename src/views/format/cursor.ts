// The keyset cursors of the dashboard's "Older" links: the last row's time and id.
import { canonicalUuid, UUID_PATTERN } from '../../../schemas/uuid.js';

/** Where a page of a newest-first list starts: the row before which the next page begins. */
export interface KeysetCursor {
  createdAt: Date;
  id: string;
}

const CURSOR = new RegExp(`^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z)_(${UUID_PATTERN.slice(1, -1)})$`);

export function encodeCursor(cursor: KeysetCursor): string {
  return `${cursor.createdAt.toISOString()}_${cursor.id}`;
}

/** The cursor an "Older" link carries; null when `value` is not one (hand-edited, or no such time). */
export function decodeCursor(value: string): KeysetCursor | null {
  const match = CURSOR.exec(value);
  if (!match || Number.isNaN(Date.parse(match[1]!))) return null;
  return { createdAt: new Date(match[1]!), id: canonicalUuid(match[2]!) };
}

// ---- Statuses, reasons and events in words ----
