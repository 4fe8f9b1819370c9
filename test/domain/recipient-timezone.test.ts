// Whose local time a call's window is read in: the trigger's zone, the number's country when it has one zone, else
// the agent's; names matched without regard to case; and which zone the dispatcher reads a waiting call's window in.
import { describe, expect, it } from 'vitest';
import { callTimezone, countryTimezone, knownTimeZone, windowZoneOf } from '../../src/domain/recipient-timezone.js';
import { parseE164 } from '../../src/domain/phone-number.js';

describe('countryTimezone', () => {
  it.each([
    ['FR', 'Europe/Paris'],
    ['GB', 'Europe/London'],
    ['JP', 'Asia/Tokyo'],
    ['IN', 'Asia/Kolkata'],
    ['ZA', 'Africa/Johannesburg'],
    ['DO', 'America/Santo_Domingo'],
  ])('%s has one zone: %s', (country, zone) => {
    expect(countryTimezone(country)).toBe(zone);
  });

  it.each(['US', 'CA', 'AU', 'BR', 'RU', 'MX', 'NZ', 'DE', 'ES', 'PT'])(
    '%s has several zones: none is guessed',
    (c) => {
      expect(countryTimezone(c)).toBeNull();
    },
  );

  it('no country (a non-geographic number) or an unknown code: none', () => {
    expect(countryTimezone(undefined)).toBeNull();
    expect(countryTimezone('XX')).toBeNull();
  });

  it("the number's country comes from the same parse as its validity: +1 is split by area code", () => {
    expect(parseE164('+14155552671')).toEqual({ country: 'US' });
    expect(parseE164('+16135550123')).toEqual({ country: 'CA' });
    expect(parseE164('+18095550123')).toEqual({ country: 'DO' });
    expect(parseE164('+33142685300')).toEqual({ country: 'FR' });
    expect(parseE164('+80012345678')).toEqual({ country: undefined });
    expect(parseE164('+1415555')).toBeNull();
  });
});

describe('knownTimeZone', () => {
  it('a zone is found without regard to case and spelled as the tz database spells it', () => {
    expect(knownTimeZone('America/New_York')).toBe('America/New_York');
    expect(knownTimeZone('america/new_york')).toBe('America/New_York');
    expect(knownTimeZone('EUROPE/KYIV')).toBe('Europe/Kyiv');
    expect(knownTimeZone('UTC')).toBe('UTC');
    expect(knownTimeZone('Etc/GMT+5')).toBe('Etc/GMT+5');
    expect(knownTimeZone('US/Eastern')).toBe('US/Eastern');
  });

  it.each(['Mars/Olympus_Mons', 'America/NewYork', '+05:00', '-03:00', 'New York', '', 'America/New_York\u0000'])(
    '%j is no zone',
    (name) => {
      expect(knownTimeZone(name)).toBeNull();
    },
  );
});

describe('callTimezone', () => {
  const agent = { timezone: 'Asia/Tokyo', windowTimezone: 'recipient' as const };

  it("window_timezone agent: the agent's zone, whatever the trigger gave", () => {
    expect(callTimezone({ ...agent, windowTimezone: 'agent' }, { requested: 'Europe/Paris', country: 'FR' })).toEqual({
      timezone: 'Asia/Tokyo',
      source: 'agent',
    });
  });

  it('window_timezone recipient: the request first, then the country, then the agent', () => {
    expect(callTimezone(agent, { requested: 'America/Chicago', country: 'FR' })).toEqual({
      timezone: 'America/Chicago',
      source: 'request',
    });
    expect(callTimezone(agent, { requested: null, country: 'FR' })).toEqual({
      timezone: 'Europe/Paris',
      source: 'country',
    });
    expect(callTimezone(agent, { requested: null, country: 'US' })).toEqual({
      timezone: 'Asia/Tokyo',
      source: 'agent',
    });
    expect(callTimezone(agent, { requested: null, country: undefined })).toEqual({
      timezone: 'Asia/Tokyo',
      source: 'agent',
    });
  });
});

describe('windowZoneOf: the zone the dispatcher reads a waiting call in', () => {
  it("the callee's zone stays the call's (request, country)", () => {
    expect(windowZoneOf({ timezone: 'Europe/Paris', timezoneSource: 'country' }, 'Asia/Tokyo')).toBe('Europe/Paris');
    expect(windowZoneOf({ timezone: 'America/Chicago', timezoneSource: 'request' }, 'Asia/Tokyo')).toBe(
      'America/Chicago',
    );
  });

  it("the agent's zone is read live: source agent, and calls stored before calls had a zone", () => {
    expect(windowZoneOf({ timezone: 'Asia/Tokyo', timezoneSource: 'agent' }, 'Europe/Berlin')).toBe('Europe/Berlin');
    expect(windowZoneOf({ timezone: null, timezoneSource: null }, 'Europe/Berlin')).toBe('Europe/Berlin');
  });
});
