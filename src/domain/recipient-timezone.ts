// Whose local time a call's calling window is read in: the agent's zone (window_timezone: agent, the default), or the
// callee's (window_timezone: recipient): the trigger's recipient_timezone, else the zone of the number's country when
// the tz database's country table gives that country exactly one, else the agent's. The call stores the zone and
// where it came from (timezone, timezone_source); the dispatcher reads its window in windowZoneOf the call.
import { getAllCountries, getAllTimezones } from 'countries-and-timezones';
import type { TimezoneSource, WindowTimezone } from '../../schemas/vocabulary.js';
import { isValidTimeZone } from './calling-window.js';

/**
 * Country (ISO 3166-1 alpha-2) -> its one zone, for the countries that have exactly one in the tz database's country
 * table (deprecated links left out), as countries-and-timezones ships it; built once at load, a map lookup per
 * trigger. Countries with several zones are absent on purpose (the US, Canada, Australia, Brazil, Russia, but also
 * Germany for Büsingen, Spain for the Canaries, Portugal for the Azores): guessing one of them could ring at night.
 */
const SINGLE_ZONE_COUNTRIES: ReadonlyMap<string, string> = new Map(
  Object.values(getAllCountries()).flatMap((country) => {
    const [zone, ...others] = country.timezones;
    return zone !== undefined && others.length === 0 ? [[country.id, zone] as const] : [];
  }),
);

/**
 * Every name of the tz database, links included, by its lower-case form: a name is matched without regard to case
 * (as the runtime's time-zone data does) and stored as the database spells it (america/new_york -> America/New_York).
 */
const ZONE_NAMES: ReadonlyMap<string, string> = new Map(
  Object.keys(getAllTimezones({ deprecated: true })).map((name) => [name.toLowerCase(), name]),
);

/**
 * Whether this runtime's time-zone data knows each name asked about so far, for the names of ZONE_NAMES only (so it
 * stays bounded): asking builds an Intl.DateTimeFormat, far dearer than a lookup. Filled on first use, not at load,
 * where checking every zone would cost a noticeable part of a second.
 */
const runtimeKnows = new Map<string, boolean>();

function usable(name: string): boolean {
  let known = runtimeKnows.get(name);
  if (known === undefined) {
    known = isValidTimeZone(name);
    if (ZONE_NAMES.has(name.toLowerCase())) runtimeKnows.set(name, known);
  }
  return known;
}

/** The zone of a country that has exactly one (and that this runtime knows), else null. */
export function countryTimezone(country: string | undefined): string | null {
  const zone = country === undefined ? undefined : SINGLE_ZONE_COUNTRIES.get(country);
  return zone !== undefined && usable(zone) ? zone : null;
}

/**
 * The IANA zone `name` names, spelled as stored, or null for a name this runtime's time-zone data does not know (a
 * UTC offset such as +05:00 included: it has no daylight-saving rules). A zone newer than the package's table but
 * known to the runtime is kept as written.
 */
export function knownTimeZone(name: string): string | null {
  const spelled = ZONE_NAMES.get(name.toLowerCase()) ?? name;
  return usable(spelled) ? spelled : null;
}

export interface CallTimezone {
  timezone: string;
  source: TimezoneSource;
}

/** The zone a new call's window is read in, and where it came from. `requested`: the trigger's recipient_timezone. */
export function callTimezone(
  agent: { timezone: string; windowTimezone: WindowTimezone },
  recipient: { requested: string | null; country: string | undefined },
): CallTimezone {
  if (agent.windowTimezone === 'recipient') {
    if (recipient.requested !== null) return { timezone: recipient.requested, source: 'request' };
    const byCountry = countryTimezone(recipient.country);
    if (byCountry !== null) return { timezone: byCountry, source: 'country' };
  }
  return { timezone: agent.timezone, source: 'agent' };
}

/**
 * The zone a waiting call's window is read in when it is due: the callee's zone it was accepted with (source request
 * or country) stays the call's; a call whose zone is the agent's follows the agent's zone as it is now, as the
 * agent's windows do (an operator who corrects an agent's zone corrects its waiting calls too), and so do calls
 * stored before calls had a zone (timezone null).
 */
export function windowZoneOf(
  call: { timezone: string | null; timezoneSource: TimezoneSource | null },
  agentTimezone: string,
): string {
  const own = call.timezoneSource === 'request' || call.timezoneSource === 'country';
  return own && call.timezone !== null ? call.timezone : agentTimezone;
}
