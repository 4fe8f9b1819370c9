// How the dashboard writes a moment for the signed-in user: in their own time zone with its abbreviation
// ("2054-11-23 11:42:07 CET"), or in UTC as callctl writes it (no zone chosen, or "Show times in UTC"); and how it
// reads a day or a minute typed in that zone (the Calls list's filters), DST included.
import { DateTime } from 'luxon';
import { formatMinute, formatTime } from '../../domain/utc-time.js';

/** A form's day or minute: `YYYY-MM-DD`, or with `THH:MM` (a space for the T; seconds optional). */
const TYPED = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** Per zone, the formatters that write its wall time and name its abbreviation (at most the tz database's zones). */
const formatters = new Map<string, { wall: Intl.DateTimeFormat; british: Intl.DateTimeFormat }>();

function formattersOf(zone: string) {
  let found = formatters.get(zone);
  if (!found) {
    const options = { timeZone: zone, hourCycle: 'h23', timeZoneName: 'short' } as const;
    const wall = new Intl.DateTimeFormat('en-US', {
      ...options,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, (found = { wall, british: new Intl.DateTimeFormat('en-GB', options) }));
  }
  return found;
}

/** A name such as GMT+1 or GMT-4:30: an offset, not an abbreviation. */
const OFFSET_NAME = /^GMT[+-]/;

/**
 * The zone's wall time at `at` and its abbreviation. CLDR's English names the abbreviations of US zones (EST), its
 * British English those of Europe (CET, BST); a zone with none in either is written as its offset (GMT+5:30).
 */
function wallTime(at: Date, zone: string): { parts: Record<string, string>; abbreviation: string } {
  const { wall, british } = formattersOf(zone);
  const parts = Object.fromEntries(wall.formatToParts(at).map((p) => [p.type, p.value]));
  let abbreviation = parts.timeZoneName ?? zone;
  if (OFFSET_NAME.test(abbreviation)) {
    const other = british.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value;
    if (other && !OFFSET_NAME.test(other)) abbreviation = other;
  }
  return { parts, abbreviation };
}

/** Whether this runtime's time-zone data knows `zone` (a zone stored by hand may not be). */
function knownZone(zone: string): boolean {
  return DateTime.fromMillis(0, { zone }).isValid;
}

/** The times of one dashboard request: what reply.page and the page models write every moment with. */
export class ShownTimes {
  /** The zone times are shown in: UTC, or the canonical IANA name of the user's zone. */
  readonly zone: string;

  /** `zone`: the user's zone (null: never chosen, UTC); one this runtime does not know is shown as UTC. */
  constructor(zone: string | null) {
    this.zone = zone && zone !== 'UTC' && knownZone(zone) ? zone : 'UTC';
  }

  /** Whether times are shown in UTC. */
  get utc(): boolean {
    return this.zone === 'UTC';
  }

  /** `2054-11-23 11:42:07 CET`; in UTC, `2054-11-23 10:42:07 UTC` (src/domain/utc-time.ts). */
  time(at: Date): string {
    if (this.utc) return formatTime(at);
    const { parts: p, abbreviation } = wallTime(at, this.zone);
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${abbreviation}`;
  }

  /** `2054-11-23 11:42 CET`: to the minute, where the seconds would crowd (a status badge). */
  minute(at: Date): string {
    if (this.utc) return formatMinute(at);
    const { parts: p, abbreviation } = wallTime(at, this.zone);
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} ${abbreviation}`;
  }

  /** A time, or a dash when there is none (tables). */
  orDash(at: Date | null): string {
    return at ? this.time(at) : '-';
  }

  /** A time, or null when there is none (the template says what "none" means there). */
  orNull(at: Date | null | undefined): string | null {
    return at ? this.time(at) : null;
  }

  /** The day of `at` here, `2054-11-23`. */
  day(at: Date): string {
    return this.typed(at).slice(0, 10);
  }

  /** The minute of `at` here as a form's field takes it, `2054-11-23T11:42`. */
  typed(at: Date): string {
    if (this.utc) return at.toISOString().slice(0, 16);
    const { parts: p } = wallTime(at, this.zone);
    return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
  }

  /**
   * A day (`YYYY-MM-DD`) or a minute (`YYYY-MM-DDTHH:MM` or `YYYY-MM-DD HH:MM`, seconds optional) read here: the
   * moment it starts, or with `end` the moment after it (a range to it includes the whole day or minute). A day is
   * local midnight to local midnight, 23 or 25 hours on a day the clocks change; a minute the clocks skip is read as
   * the moment they jumped to. Null when there is no such day or time (February 30, 24:00).
   */
  parse(value: string, end = false): Date | null {
    const m = TYPED.exec(value.trim());
    if (!m) return null;
    const [, y, mo, d, h = '0', mi = '0', s = '0'] = m;
    const fields = { year: +y!, month: +mo!, day: +d!, hour: +h, minute: +mi, second: +s };
    // Luxon checks each field's range (no February 30, no minute 60) but takes hour 24 as the next midnight.
    if (fields.hour > 23) return null;
    const start = DateTime.fromObject(fields, { zone: this.zone });
    if (!start.isValid) return null;
    if (!end) return start.toJSDate();
    const step = m[6] !== undefined ? { seconds: 1 } : m[4] !== undefined ? { minutes: 1 } : { days: 1 };
    return start.plus(step).toJSDate();
  }

  /**
   * A time and, when `place` (a call's zone) is given and differs from this one, the wall time there:
   * `2054-11-23 15:00:00 CET (Mon 09:00 America/New_York)`.
   */
  withLocal(at: Date, place: string | null): string {
    const shown = this.time(at);
    if (!place || place === this.zone || (place === 'UTC' && this.utc)) return shown;
    try {
      const local = new Intl.DateTimeFormat('en-GB', {
        timeZone: place,
        weekday: 'short',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).format(at);
      return `${shown} (${local} ${place})`;
    } catch {
      return shown; // a zone stored by hand that Intl does not know
    }
  }
}

/** Times in UTC: a visitor's pages, a user who never chose a zone, and whatever is not shown to one user (e-mails). */
export const UTC_TIMES = new ShownTimes(null);
