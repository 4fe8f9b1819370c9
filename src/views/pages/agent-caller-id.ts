// An agent's caller ID as the form takes it: typed as people write numbers, read in the account's country
// (src/domain/typed-phone-number.ts), shown back as the E.164 number stored, and its problem in plain words.
import { callingCodeOf, parseTypedNumber, type TypedNumberProblem } from '../../domain/typed-phone-number.js';

/**
 * The country a number typed without its country code is read in (the account's: src/admin/account-country.ts), and
 * its name for the form's words.
 */
export interface PhoneCountry {
  code: string;
  name: string;
}

export function phoneCountry(code: string): PhoneCountry {
  let name = code;
  try {
    name = new Intl.DisplayNames(['en'], { type: 'region' }).of(code) ?? code;
  } catch {
    // An unknown code keeps its letters.
  }
  return { code, name: `${name} (${callingCodeOf(code)})` };
}

/** The number as stored (E.164) when it reads as one, else as typed (to correct it). */
export const phoneShown = (typed: string, country: PhoneCountry) => {
  const read = parseTypedNumber(typed, country.code);
  return 'e164' in read ? read.e164 : typed;
};

/** A typed number's problem in words. */
const PHONE_WORDS: Record<Exclude<TypedNumberProblem, 'empty'>, (country: PhoneCountry) => string> = {
  unreadable: () =>
    'Write the number in digits, with spaces, brackets, dots or dashes if you like, such as +1 415 555 2671: no ' +
    'letters, no extension.',
  impossible: (country) =>
    'This is not a possible number: check the country code and the digits (a number without a country code is ' +
    `read as one of ${country.name}).`,
};

/** The typed number's problem in words, or null (none typed is no problem: the agent then has no number). */
export function phoneProblem(typed: string, country: PhoneCountry): string | null {
  const read = parseTypedNumber(typed, country.code);
  return 'problem' in read && read.problem !== 'empty' ? PHONE_WORDS[read.problem](country) : null;
}

/** What the notice adds when the number was typed otherwise than it is stored: the E.164 number kept. */
export function storedNumber(typed: string, stored: string | null | undefined): string {
  return stored && typed.trim() !== stored ? ` Its caller ID is stored as ${stored}.` : '';
}
