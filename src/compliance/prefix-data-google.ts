// PrefixData from Google's libphonenumber data for +1: the geocoding map (en/1.txt: prefix without the country code
// -> "Florida" or "Tallahassee, FL") and the time-zone map (map_data.txt: prefix with it -> "America/New_York&...").
import { knownTimeZone } from '../domain/recipient-timezone.js';
import type { PrefixData } from './candidates.js';
import { regionsNamed } from './region-names.js';

/** A prefix map as libphonenumber ships it: digits -> description, matched by longest prefix. */
export type PrefixMap = Readonly<Record<string, string>>;

/**
 * An area code's regions and zones are those of every line under it, not only the area code's own line: 850 is
 * "Florida" and America/New_York, but some of its exchanges are America/Chicago; 867's exchanges name YT, NT and
 * NU. A callee may be anywhere any of its numbers is.
 */
export function prefixDataFromGoogle(geocodes: PrefixMap, timezones: PrefixMap): PrefixData {
  const regions = new Map<string, Set<string>>();
  const zones = new Map<string, Set<string>>();
  const add = (map: Map<string, Set<string>>, key: string, values: readonly string[]) => {
    const set = map.get(key) ?? new Set<string>();
    for (const value of values) set.add(value);
    map.set(key, set);
  };
  for (const [prefix, description] of Object.entries(geocodes)) {
    if (prefix.length >= 3) add(regions, prefix.slice(0, 3), regionsNamed(description));
  }
  for (const [prefix, names] of Object.entries(timezones)) {
    if (!prefix.startsWith('1') || prefix.length < 4) continue;
    const known = names.split('&').flatMap((name) => knownTimeZone(name) ?? []);
    add(zones, prefix.slice(1, 4), known);
  }
  const byRegion = new Map<string, Set<string>>();
  for (const [areaCode, named] of regions) {
    for (const region of named) add(byRegion, region, [...(zones.get(areaCode) ?? [])]);
  }
  const list = (set: Set<string> | undefined) => (set === undefined ? [] : [...set].sort());
  return {
    areaCodeRegions: (areaCode) => list(regions.get(areaCode)),
    areaCodeZones: (areaCode) => list(zones.get(areaCode)),
    regionZones: (region) => list(byRegion.get(region)),
  };
}
