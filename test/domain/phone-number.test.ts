// Tests for strict E.164 validation, including the simulated dialer's test numbers.
import { describe, expect, it } from 'vitest';
import { E164_PATTERN, isValidE164 } from '../../src/domain/phone-number.js';

describe('isValidE164', () => {
  it.each([
    ['US', '+14155552671'],
    ['US toll-free', '+18005550199'],
    ['CA', '+16135550123'],
    ['UK mobile', '+447911123456'],
    ['UK London landline', '+442071838750'],
    ['DE Berlin landline', '+4930123456'],
    ['DE Berlin landline, longer', '+493012345678'],
    ['DE mobile', '+4915123456789'],
    ['FR landline', '+33123456789'],
    ['FR mobile', '+33612345678'],
    ['IN mobile', '+919876543210'],
    ['BR São Paulo mobile', '+5511987654321'],
    ['BR São Paulo landline', '+551123456789'],
    ['AU mobile', '+61412345678'],
    ['AU Sydney landline', '+61212345678'],
    ['JP Tokyo landline', '+81312345678'],
    ['JP mobile', '+819012345678'],
    ['IT landline keeps its leading 0', '+390669812345'],
    ['international freephone (non-geographic +800)', '+80012345678'],
  ])('accepts %s %s', (_name, value) => {
    expect(isValidE164(value)).toBe(true);
  });

  // The simulated dialer relies on these; they are length-possible +1 numbers even though
  // 500/555 numbers are not assigned ranges (libphonenumber's isValid() says false for +1555…).
  it.each(['+15005550001', '+15005550002', '+15005550003', '+15551234567'])(
    'accepts simulated test number %s',
    (value) => {
      expect(isValidE164(value)).toBe(true);
    },
  );

  it.each([
    ['spaces', '+1 415 555 2671'],
    ['dashes', '+1-415-555-2671'],
    ['dots', '+1.415.555.2671'],
    ['national format with parentheses', '(415) 5552671'],
    ['parentheses with +', '+1 (415) 555-2671'],
    ['missing +', '14155552671'],
    ['leading 00 instead of +', '0014155552671'],
    ['leading 0 after +', '+0123456'],
    ['country code only', '+1'],
    ['plus only', '+'],
    ['double plus', '++14155552671'],
    ['empty', ''],
    ['16 digits', '+1234567890123456'],
    ['16 digits, real country', '+4412345678901234'],
    ['15 digits but too long for +1', '+141555526710000'],
    ['UK too short, with space', '+44 20'],
    ['UK too short', '+4420'],
    ['no such country', '+999123456789'],
    ['full-width digits', '+１４１５５５５２６７１'],
    ['Arabic-Indic digits', '+١٤١٥٥٥٥٢٦٧١'],
    ['trailing newline', '+14155552671\n'],
    ['leading space', ' +14155552671'],
    ['trailing space', '+14155552671 '],
    ['letters (vanity number)', '+1800FLOWERS'],
    ['letter at the end', '+1415555267a'],
    ['extension', '+14155552671;ext=12'],
    ['tel: URI', 'tel:+14155552671'],
    ['full-width plus', '＋14155552671'],
    // Pass the pattern, but libphonenumber only calls them possible after rewriting them.
    ['trunk prefix kept after country code (UK)', '+4402071838750'],
    ['trunk prefix kept after country code (DE)', '+4903012345678'],
    ['country code typed twice', '+114155552671'],
    ['RU trunk prefix 8 kept', '+788005553535'],
  ])('rejects %s %j', (_name, value) => {
    expect(isValidE164(value)).toBe(false);
  });

  it('never throws on non-string input', () => {
    for (const value of [undefined, null, 14155552671, {}, []]) {
      expect(() => isValidE164(value as string)).not.toThrow();
      expect(isValidE164(value as string)).toBe(false);
    }
  });
});

describe('E164_PATTERN', () => {
  it('is the plain E.164 shape', () => {
    expect(E164_PATTERN.source).toBe('^\\+[1-9]\\d{1,14}$');
    expect(E164_PATTERN.flags).toBe('');
    expect(E164_PATTERN.test('+12')).toBe(true);
    expect(E164_PATTERN.test('+123456789012345')).toBe(true);
    expect(E164_PATTERN.test('+1234567890123456')).toBe(false);
    expect(E164_PATTERN.test('+14155552671\n')).toBe(false);
  });
});
