// Where the callee may be: the places (region and every time zone in it) whose calling rules a dial must satisfy,
// from the number's own prefix (for +1, the area code's states or provinces and all its zones) and the trigger's
// optional recipient_region, which adds to them and never replaces them.
import { getCountry } from 'countries-and-timezones';
import { REGIONS } from '../../schemas/calling-rules.js';
import { knownTimeZone } from '../domain/recipient-timezone.js';
import { parseE164 } from '../domain/phone-number.js';
import { territoryRegion } from './region-names.js';

/** One place the callee may be: an ISO 3166-2 region (or a country) and every IANA zone it may be in there. */
export interface Candidate {
  region: string;
  timezones: string[];
}

/**
 * What a number's prefix says about its place, from Google's libphonenumber geocoding and time-zone data (see
 * prefix-data-google.ts): a NANP area code's regions (one, or several for 867 and 902) and every zone any of its
 * numbers is in, and every zone of a region's area codes. An empty answer: the data does not say.
 */
export interface PrefixData {
  areaCodeRegions(areaCode: string): readonly string[];
  areaCodeZones(areaCode: string): readonly string[];
  regionZones(region: string): readonly string[];
}

/** The 400 message for a recipient_region the rules do not know. */
export const RECIPIENT_REGION_MESSAGE =
  'recipient_region must be an ISO 3166-2 code of a US state or territory or a Canadian province or territory ' +
  '(such as US-FL or CA-QC), or US or CA';

export class RecipientRegionError extends Error {
  readonly field = 'recipient_region';
  constructor() {
    super(RECIPIENT_REGION_MESSAGE);
  }
}

const REGION_SET: ReadonlySet<string> = new Set(REGIONS);

/** The region a trigger's recipient_region names, as the rules spell it (us-fl -> US-FL); throws when unknown. */
export function parseRecipientRegion(text: string): string {
  const region = typeof text === 'string' && text.length <= 10 ? text.trim().toUpperCase() : '';
  if (!REGION_SET.has(region)) throw new RecipientRegionError();
  return region;
}

/** Every zone of a country that this runtime knows, as stored. */
function countryZones(country: string): string[] {
  const zones = getCountry(country)?.timezones ?? [];
  return zones.map((zone) => knownTimeZone(zone)).filter((zone): zone is string => zone !== null);
}

/** The zones of a region named by code: its area codes' zones, else its country's (or territory's) zones. */
function zonesOfRegion(region: string, data: PrefixData): string[] {
  const own = data.regionZones(region);
  if (own.length > 0) return [...own];
  const [country = region, subdivision] = region.split('-');
  const territory = subdivision !== undefined ? territoryRegion(subdivision) : null;
  return countryZones(territory !== null && subdivision !== undefined ? subdivision : country);
}

function numberCandidates(e164: string, data: PrefixData): Candidate[] {
  const parsed = parseE164(e164);
  const country = parsed?.country;
  if (country === undefined) return [];
  if (!e164.startsWith('+1')) return [{ region: country, timezones: countryZones(country) }];
  const areaCode = e164.slice(2, 5);
  const named = data.areaCodeRegions(areaCode);
  const regions = named.length > 0 ? named : [territoryRegion(country) ?? country];
  const zones = data.areaCodeZones(areaCode);
  return regions.map((region) => ({
    region,
    timezones: zones.length > 0 ? [...zones] : zonesOfRegion(region, data),
  }));
}

/**
 * The places a callee of `e164` may be: the number's own (for +1 its area code's regions, each with every zone
 * the area code may be in; elsewhere its country and all that country's zones) and the declared
 * `recipientRegion` with every zone of that region, merged by region. Throws RecipientRegionError for a region the
 * rules do not know; a number of no country (+800) has no place of its own.
 */
export function candidatesFor(e164: string, recipientRegion: string | undefined, data: PrefixData): Candidate[] {
  const found = numberCandidates(e164, data);
  if (recipientRegion !== undefined) {
    const region = parseRecipientRegion(recipientRegion);
    found.push({ region, timezones: zonesOfRegion(region, data) });
  }
  const merged = new Map<string, Set<string>>();
  for (const { region, timezones } of found) {
    const zones = merged.get(region) ?? new Set<string>();
    for (const zone of timezones) zones.add(zone);
    merged.set(region, zones);
  }
  return [...merged].map(([region, zones]) => ({ region, timezones: [...zones].sort() }));
}
