// The time zones an agent's form offers: the canonical IANA names only (no deprecated links such as Asia/Calcutta or
// Europe/Kiev), grouped by region, with each one's deprecated names, as countries-and-timezones ships the tz database.
// Node 20's Intl.supportedValuesOf('timeZone') is not used: it lists CLDR's ids, which are the old names.
import { getAllTimezones } from 'countries-and-timezones';

/** The one zone offered outside the regions: a new agent's default. */
export const UTC = 'UTC';
/** Regions of the tz database that are no place people live in: Etc (fixed offsets) and Factory. */
const NOT_REGIONS = new Set(['Etc', 'Factory']);

export interface ZoneChoice {
  /** The canonical name, e.g. Asia/Kolkata. */
  value: string;
  /** The place in words, e.g. "Kolkata", "Argentina / Buenos Aires". */
  place: string;
  /** Its deprecated names (links), e.g. Asia/Calcutta: the browser may report one of them. */
  aliases: string[];
}

export interface ZoneRegion {
  region: string;
  zones: ZoneChoice[];
}

const ALL = getAllTimezones({ deprecated: true });

/** A zone's canonical name (following links, which may chain); a name the table lacks is itself. */
function followLinks(name: string): string {
  let current = name;
  for (let i = 0; i < 5; i++) {
    const next = ALL[current as keyof typeof ALL]?.aliasOf;
    if (!next) return current;
    current = next;
  }
  return current;
}

/** The name the form shows for `name`: UTC for UTC's links (Etc/UTC, GMT, Zulu, ...), else the canonical name. */
export function canonicalZone(name: string): string {
  const canonical = followLinks(name);
  return canonical === 'Etc/UTC' || canonical === 'Etc/GMT' ? UTC : canonical;
}

const aliasesOf = new Map<string, string[]>();
for (const zone of Object.values(ALL)) {
  if (!zone.aliasOf) continue;
  const target = canonicalZone(zone.name);
  aliasesOf.set(target, [...(aliasesOf.get(target) ?? []), zone.name]);
}

const placeWords = (rest: string) => rest.replaceAll('_', ' ').replaceAll('/', ' / ');

/** The canonical zones by region (Africa, America, Antarctica, Asia, ...), each region's places in name order. */
export const ZONE_REGIONS: ZoneRegion[] = (() => {
  const regions = new Map<string, ZoneChoice[]>();
  for (const zone of Object.values(ALL)) {
    const [region = '', ...rest] = zone.name.split('/');
    if (zone.aliasOf || rest.length === 0 || NOT_REGIONS.has(region)) continue;
    const choice = { value: zone.name, place: placeWords(rest.join('/')), aliases: aliasesOf.get(zone.name) ?? [] };
    regions.set(region, [...(regions.get(region) ?? []), choice]);
  }
  return [...regions.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([region, zones]) => ({ region, zones: zones.sort((a, b) => a.place.localeCompare(b.place)) }));
})();

/** UTC's own deprecated names, for the UTC choice. */
export const UTC_ALIASES = ['Etc/UTC', 'Etc/GMT', ...(aliasesOf.get(UTC) ?? [])];

/** Whether the form offers `name` as it is (a canonical name, or UTC). */
export function isOfferedZone(name: string): boolean {
  return name === UTC || ZONE_REGIONS.some((r) => r.zones.some((z) => z.value === name));
}
