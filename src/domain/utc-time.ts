// Times as people read them, always in UTC: the dashboard's pages and the e-mails and messages of callctl and the
// dashboard write them with these, so the same moment reads the same everywhere (an invitation's expiry included).

/** `2026-11-23 10:42:07 UTC`. */
export function formatTime(at: Date): string {
  return at
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

/** `2026-11-23 10:42 UTC`: to the minute, where the seconds would crowd (a status badge). */
export function formatMinute(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
