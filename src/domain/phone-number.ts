// Strict E.164 validation for numbers we are asked to dial: exact canonical form, possible length for its country.
// `max` metadata: the possible-length data is the same as in `min`, but `max` resolves which country
// of a shared calling code (+1, +7, +44, ...) a number belongs to with the full per-type patterns,
// as Google's libphonenumber does, and that country's lengths are the ones checked. `mobile` is not
// an option: it drops non-mobile lengths, so landlines could be reported as impossible.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

// `\d` in JS only ever matches ASCII 0-9 and `$` without the `m` flag only matches at the very end,
// so full-width digits and a trailing newline are rejected here, before the library could normalize them.
export const E164_PATTERN = /^\+[1-9]\d{1,14}$/;

// The caller's string is what gets dialed, so nothing is normalized. libphonenumber does normalize
// during parsing (it strips trunk prefixes, e.g. +44 0 20… -> +44 20…, and collapses a repeated
// country code, e.g. +1 1 415… -> +1 415…) and then reports the *normalized* number as possible;
// requiring its canonical E.164 form to equal the input rejects those instead of silently accepting them.
export function isValidE164(value: string): boolean {
  return parseE164(value) !== null;
}

/**
 * A number we may dial, with its country (ISO 3166-1 alpha-2, as the same parse resolves it: for +1 the area code
 * decides between the US, Canada and the Caribbean; undefined for numbers of no country such as +800), or null when
 * isValidE164 refuses it. One parse serves both, so the trigger pays for one.
 */
export function parseE164(value: string): { country: string | undefined } | null {
  if (typeof value !== 'string' || !E164_PATTERN.test(value)) return null;
  try {
    const parsed = parsePhoneNumberFromString(value, { extract: false });
    return parsed !== undefined && parsed.number === value && parsed.isPossible() ? { country: parsed.country } : null;
  } catch {
    // The library documents no throw for a string that passed the pattern; this keeps it a predicate.
    return null;
  }
}
