// The do-not-call list's rules, without the database: what an entry may be (a number the trigger would accept, stored
// in E.164 and compared exactly; a reason of one readable line) and how a search is read (a number's beginning or
// words of the reason). The CSV a list is imported from and exported to is in do-not-call-csv.ts.
import { codePoints, readableNameProblem } from '../../schemas/text.js';
import { isValidE164 } from './phone-number.js';

/** A reason has at most this many characters (Unicode code points). */
export const REASON_MAX_LENGTH = 500;
/** The largest CSV file the dashboard imports (the request's file part; callctl takes larger ones). */
export const DASHBOARD_IMPORT_MAX_BYTES = 2 * 1024 * 1024;
/** The largest CSV file callctl imports: about two million numbers with short reasons. */
export const CLI_IMPORT_MAX_BYTES = 64 * 1024 * 1024;

/** Why `number` cannot be listed (the trigger's own rule), or null. */
export function numberProblem(number: string): string | null {
  return isValidE164(number)
    ? null
    : `"${number}" is not a phone number in E.164 form (like +14155552671): a plus, the country code and the number, nothing else`;
}

/** The reason as stored: trimmed, null when empty. */
export function normalReason(reason: string | null | undefined): string | null {
  const trimmed = reason?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** Why a (trimmed) reason cannot be stored, or null. */
export function reasonProblem(reason: string | null): string | null {
  if (reason === null) return null;
  if (codePoints(reason) > REASON_MAX_LENGTH) return `A reason has at most ${REASON_MAX_LENGTH} characters`;
  const problem = readableNameProblem(reason);
  return problem && `A reason ${problem}`;
}

/** What a search box's text asks for: numbers beginning with `prefix` ("+1415"), or reasons containing `text`. */
export type DoNotCallSearch = { kind: 'prefix'; prefix: string } | { kind: 'reason'; text: string } | null;

/** Digits, with or without the plus, are a number's beginning; anything else is searched for in the reasons. */
export function parseSearch(query: string | undefined): DoNotCallSearch {
  const text = query?.trim() ?? '';
  if (text === '') return null;
  const digits = /^\+?(\d{1,15})$/.exec(text)?.[1];
  return digits ? { kind: 'prefix', prefix: `+${digits}` } : { kind: 'reason', text };
}
