// A phone number as people type it into a form ("+1 415 555 2671", "(415) 555-2671" or "415.555.2671" read with a
// default country, "020 7183 8750" in GB, "0044 20 7183 8750"), read into the E.164 number that is stored, or the
// problem with it; and the country most of an account's agents' numbers are in (the account's country, read by
// src/admin/account-country.ts). For the forms people type into (an agent's caller ID, do-not-call add and import,
// callctl dnc) only: the trigger API takes E.164 exactly as written and never normalises (src/domain/phone-number.ts).
import { getCountryCallingCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { E164_PATTERN, parseE164 } from './phone-number.js';

/** The country a number without a country code is read in when an account's agents have no number to say. */
export const DEFAULT_COUNTRY = 'US';

/**
 * What makes a typed number unusable: `empty` (nothing but blanks), `unreadable` (a character other than ASCII digits,
 * blanks and the separators people write: `( ) . - /`, a `+` other than the first character, letters such as a vanity
 * number's or an extension's), `impossible` (no number of its country has that many digits, or no country has that
 * code).
 */
export type TypedNumberProblem = 'empty' | 'unreadable' | 'impossible';

export type TypedNumber = { e164: string; country: string | undefined } | { problem: TypedNumberProblem };

/** At most this many characters are read: the longest E.164 number is 16, a generous lot of separators beside it. */
const MAX_TYPED = 40;
const TYPED = /^\+?[\d\s().\-/]+$/;

/**
 * `text` as a number to store, in E.164, reading a number written without its country code (no `+`, no `00` or
 * other international prefix) as one of `defaultCountry` (ISO 3166-1 alpha-2); or the problem. The E.164 result is
 * one the trigger would accept (src/domain/phone-number.ts isValidE164: possible for its country).
 */
export function parseTypedNumber(text: string, defaultCountry: string): TypedNumber {
  const typed = text.trim();
  if (typed === '') return { problem: 'empty' };
  if (typed.length > MAX_TYPED || !TYPED.test(typed) || !/\d/.test(typed)) return { problem: 'unreadable' };
  // Already E.164 (an import's rows mostly are): one parse, not two.
  const exact = E164_PATTERN.test(typed) ? parseE164(typed) : null;
  if (exact) return { e164: typed, country: exact.country };
  const country = isSupportedCountry(defaultCountry) ? defaultCountry : DEFAULT_COUNTRY;
  let number: string | undefined;
  try {
    number = parsePhoneNumberFromString(typed, { defaultCountry: country, extract: false })?.number;
  } catch {
    // The library documents no throw for such text; this keeps the answer a problem.
    number = undefined;
  }
  const checked = number === undefined ? null : parseE164(number);
  return number !== undefined && checked !== null
    ? { e164: number, country: checked.country }
    : { problem: 'impossible' };
}

/**
 * The country most of `numbers` (E.164 caller IDs, in the order they count: the oldest agent's first) belong to; a tie
 * goes to the country listed first. Undefined when none has a country (none at all, or only +800 and the like).
 */
export function mostCommonCountry(numbers: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const number of numbers) {
    const country = parseE164(number)?.country;
    if (country !== undefined) counts.set(country, (counts.get(country) ?? 0) + 1);
  }
  let best: string | undefined;
  for (const [country, count] of counts) if (best === undefined || count > counts.get(best)!) best = country;
  return best;
}

/** A country's calling code, "+1" for US, "+44" for GB. */
export function callingCodeOf(country: string): string {
  return isSupportedCountry(country) ? `+${getCountryCallingCode(country)}` : '';
}
