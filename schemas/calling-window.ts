// The words of a calling window's days, written once: src/domain/calling-window.ts parses them (callctl's --window,
// the dashboard's rows) and the dashboard's agent form states them in its schema.
export const DAY_NAMES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
/** Every day of the week: a day expression of its own (not an item of a list). */
export const EVERY_DAY = 'daily';
