// A caller ID as people type it (issue 45, point 22): read into the E.164 number stored, a number without its
// country code in the account's country; what is no number refused with the problem's kind; and the country most of
// an account's agents' numbers belong to (src/admin/account-country.ts makes it the account's country).
import { describe, expect, it } from 'vitest';
import { isValidE164 } from '../../src/domain/phone-number.js';
import { mostCommonCountry, parseTypedNumber } from '../../src/domain/typed-phone-number.js';

describe('parseTypedNumber', () => {
  it('reads the usual ways of writing a number into E.164', () => {
    const cases: [string, string, string][] = [
      ['+1 415 555 2671', 'US', '+14155552671'],
      ['+1 415 555 2671', 'GB', '+14155552671'],
      ['(415) 555-2671', 'US', '+14155552671'],
      ['415.555.2671', 'US', '+14155552671'],
      ['  415-555-2671 ', 'US', '+14155552671'],
      ['+14155552671', 'DE', '+14155552671'],
      ['020 7183 8750', 'GB', '+442071838750'],
      ['0044 20 7183 8750', 'GB', '+442071838750'],
      ['+44 (0)20 7183 8750', 'US', '+442071838750'],
      ['030 1234567', 'DE', '+49301234567'],
      ['(416) 555-0100', 'CA', '+14165550100'],
    ];
    for (const [typed, country, e164] of cases) {
      const read = parseTypedNumber(typed, country);
      expect('e164' in read && read.e164, `${typed} in ${country}`).toBe(e164);
      expect(isValidE164(e164)).toBe(true);
    }
    expect(parseTypedNumber('020 7183 8750', 'GB')).toEqual({ e164: '+442071838750', country: 'GB' });
  });

  it('says what is wrong: nothing, characters that are no number, or no possible number', () => {
    expect(parseTypedNumber('', 'US')).toEqual({ problem: 'empty' });
    expect(parseTypedNumber('   ', 'US')).toEqual({ problem: 'empty' });
    for (const typed of ['1-800-FLOWERS', '415 555 2671 ext 5', '415 555 2671 x5', '1+415', '()', '+', '--', 'abc'])
      expect(parseTypedNumber(typed, 'US'), typed).toEqual({ problem: 'unreadable' });
    for (const typed of ['12', '+1 415 555 26711', '+999 1234567', '555-2671'])
      expect(parseTypedNumber(typed, 'US'), typed).toEqual({ problem: 'impossible' });
  });

  it('an unknown default country reads as the US', () => {
    expect(parseTypedNumber('(415) 555-2671', 'ZZ')).toEqual({ e164: '+14155552671', country: 'US' });
  });
});

describe('mostCommonCountry', () => {
  it('is the country of most of the numbers (a tie: the first listed), else none', () => {
    expect(mostCommonCountry([])).toBeUndefined();
    expect(mostCommonCountry(['+442071838750', '+14155552671', '+447911123456'])).toBe('GB');
    expect(mostCommonCountry(['+4930123456', '+14155552671'])).toBe('DE');
    expect(mostCommonCountry(['+14155552671', '+4930123456', '+4930123457', '+14155552672'])).toBe('US');
    // A number of no country (+800) does not count.
    expect(mostCommonCountry(['+80012345678'])).toBeUndefined();
  });
});
