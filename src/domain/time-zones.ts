// The time zones an agent's form offers: the canonical IANA names only (no deprecated links such as Asia/Calcutta or
// Europe/Kiev), grouped by region, with each one's deprecated names, as countries-and-timezones ships the tz database.
// Node 20's Intl.supportedValuesOf('timeZone') is not used: it lists CLDR's ids, which are the old names. And the one
// spelling of a zone stored and used: canonicalTimeZone.
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

/** Every name of the table (canonical names and links) by its lower-case form. */
const BY_LOWER_CASE: ReadonlyMap<string, string> = new Map(Object.keys(ALL).map((name) => [name.toLowerCase(), name]));

/**
 * Whether this runtime's time-zone data knows each name asked about so far: only canonical names and the table's
 * own spellings are asked, so it holds at most the table's names. Asking builds an Intl.DateTimeFormat.
 */
const runtimeKnows = new Map<string, boolean>();

function runtimeZone(name: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

function knows(name: string): boolean {
  let known = runtimeKnows.get(name);
  if (known === undefined) runtimeKnows.set(name, (known = runtimeZone(name) !== null));
  return known;
}

/** A table name as stored: its canonical name (UTC for UTC's links) when this runtime knows it, else itself. */
function canonicalOfTableName(spelled: string): string | null {
  const canonical = canonicalZone(spelled);
  if (knows(canonical)) return canonical;
  return knows(spelled) ? spelled : null;
}

/**
 * The canonical IANA name a time zone written in any case, with blanks around it, names: links followed
 * (america/new_york -> America/New_York, Asia/Calcutta -> Asia/Kolkata, US/Eastern -> America/New_York, Etc/UTC ->
 * UTC), or null for no zone (a UTC offset such as +05:00 included: it has no daylight-saving rules). The result is
 * always one of the tz database's names as this runtime knows them, never the spelling given: whatever keeps zones
 * by name (Luxon's cache of zone objects, which it never frees; the agents table) holds at most those few hundred,
 * never one per spelling. A zone newer than the package's table is taken as the runtime spells it.
 */
export function canonicalTimeZone(text: string): string | null {
  const name = text.trim();
  if (name === '' || /^[+-]/.test(name)) return null;
  const spelled = BY_LOWER_CASE.get(name.toLowerCase());
  if (spelled !== undefined) return canonicalOfTableName(spelled);
  // Not in the table: the runtime's own spelling of it (bounded by the runtime's list), itself never remembered.
  const resolved = runtimeZone(name);
  if (resolved === null || /^[+-]/.test(resolved)) return null;
  const inTable = BY_LOWER_CASE.get(resolved.toLowerCase());
  return inTable === undefined ? resolved : canonicalOfTableName(inTable);
}

/** UTC's own deprecated names, for the UTC choice. */
export const UTC_ALIASES = ['Etc/UTC', 'Etc/GMT', ...(aliasesOf.get(UTC) ?? [])];

/** Whether the form offers `name` as it is (a canonical name, or UTC). */
export function isOfferedZone(name: string): boolean {
  return name === UTC || ZONE_REGIONS.some((r) => r.zones.some((z) => z.value === name));
}
