// A trigger's scheduled_at against the server's clock: at most 30 days ahead; a little in the past (clock skew) means
// now, further back is refused. The field's shape (RFC 3339 with an offset) is the schema's.
import { DATE_TIME_RULE } from '../../schemas/text.js';
import { SCHEDULE_MAX_DAYS_AHEAD, SCHEDULE_SKEW_MINUTES, TRIGGER_FIELD_ERRORS } from '../../schemas/trigger.js';

const SKEW_MS = SCHEDULE_SKEW_MINUTES * 60_000;
const AHEAD_MS = SCHEDULE_MAX_DAYS_AHEAD * 24 * 3600_000;

export type ScheduledAt = { ok: true; at: Date } | { ok: false; message: string };

/** The instant scheduled_at names, or the 400 message (naming the field) that refuses it. */
export function readScheduledAt(text: string, now: Date): ScheduledAt {
  const at = new Date(text);
  const t = at.getTime();
  // The schema checked the shape; a value that still does not parse is refused like any bad shape.
  if (Number.isNaN(t)) return { ok: false, message: `scheduled_at ${DATE_TIME_RULE}` };
  if (t < now.getTime() - SKEW_MS) return { ok: false, message: TRIGGER_FIELD_ERRORS.scheduledAtPast };
  if (t > now.getTime() + AHEAD_MS) return { ok: false, message: TRIGGER_FIELD_ERRORS.scheduledAtTooFar };
  return { ok: true, at };
}

/** When a call may first be dialled: its scheduled time, or now for none (or one within the clock skew). */
export function earliestDial(scheduledAt: Date | null, now: Date): Date {
  return scheduledAt && scheduledAt.getTime() > now.getTime() ? scheduledAt : now;
}
