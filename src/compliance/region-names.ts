// The names Google's geocoding data gives US states and territories and Canadian provinces and territories, by
// their ISO 3166-2 code: read from the data's area-code lines ("Florida", "Washington State", "Quebec").
import { CA_SUBDIVISIONS, US_SUBDIVISIONS } from '../../schemas/calling-rules.js';

const US_NAMES: Record<(typeof US_SUBDIVISIONS)[number], readonly string[]> = {
  AK: ['Alaska'], AL: ['Alabama'], AR: ['Arkansas'], AZ: ['Arizona'], CA: ['California'], CO: ['Colorado'],
  CT: ['Connecticut'], DC: ['Washington D.C.', 'District of Columbia'], DE: ['Delaware'], FL: ['Florida'],
  GA: ['Georgia'], HI: ['Hawaii'], IA: ['Iowa'], ID: ['Idaho'], IL: ['Illinois'], IN: ['Indiana'], KS: ['Kansas'],
  KY: ['Kentucky'], LA: ['Louisiana'], MA: ['Massachusetts'], MD: ['Maryland'], ME: ['Maine'], MI: ['Michigan'],
  MN: ['Minnesota'], MO: ['Missouri'], MS: ['Mississippi'], MT: ['Montana'], NC: ['North Carolina'],
  ND: ['North Dakota'], NE: ['Nebraska'], NH: ['New Hampshire'], NJ: ['New Jersey'], NM: ['New Mexico'],
  NV: ['Nevada'], NY: ['New York'], OH: ['Ohio'], OK: ['Oklahoma'], OR: ['Oregon'], PA: ['Pennsylvania'],
  RI: ['Rhode Island'], SC: ['South Carolina'], SD: ['South Dakota'], TN: ['Tennessee'], TX: ['Texas'],
  UT: ['Utah'], VA: ['Virginia'], VT: ['Vermont'], WA: ['Washington State', 'Washington'], WI: ['Wisconsin'],
  WV: ['West Virginia'], WY: ['Wyoming'], AS: ['American Samoa'], GU: ['Guam'], MP: ['Northern Mariana Islands'],
  PR: ['Puerto Rico'], UM: ['United States Minor Outlying Islands'], VI: ['U.S. Virgin Islands', 'US Virgin Islands'],
}; // prettier-ignore

const CA_NAMES: Record<(typeof CA_SUBDIVISIONS)[number], readonly string[]> = {
  AB: ['Alberta'], BC: ['British Columbia', 'British Colombia'], MB: ['Manitoba'], NB: ['New Brunswick'],
  NL: ['Newfoundland and Labrador', 'Newfoundland'], NS: ['Nova Scotia'], ON: ['Ontario'],
  PE: ['Prince Edward Island'], QC: ['Quebec', 'Québec'], SK: ['Saskatchewan'], NT: ['Northwest Territories'],
  NU: ['Nunavut'], YT: ['Yukon', 'Yukon Territory'],
}; // prettier-ignore

const BY_NAME: ReadonlyMap<string, string> = new Map([
  ...Object.entries(US_NAMES).flatMap(([code, names]) => names.map((name) => [name, `US-${code}`] as const)),
  ...Object.entries(CA_NAMES).flatMap(([code, names]) => names.map((name) => [name, `CA-${code}`] as const)),
]);

const BY_ABBREVIATION: ReadonlyMap<string, string> = new Map([
  ...US_SUBDIVISIONS.map((code) => [code, `US-${code}`] as const),
  ...CA_SUBDIVISIONS.map((code) => [code, `CA-${code}`] as const),
]);

/**
 * The regions a geocoding description names: "Florida" -> US-FL, "Tallahassee, FL" -> US-FL,
 * "Nova Scotia/Prince Edward Island" -> CA-NS and CA-PE; a place outside the US and Canada ("Nassau") -> none.
 */
export function regionsNamed(description: string): string[] {
  const found = new Set<string>();
  for (const part of description.split('/').map((p) => p.trim())) {
    const abbreviation = /, ([A-Z]{2})$/.exec(part)?.[1];
    const region = abbreviation !== undefined ? BY_ABBREVIATION.get(abbreviation) : BY_NAME.get(part);
    if (region !== undefined) found.add(region);
  }
  return [...found];
}

/** The US territories that have their own ISO 3166-1 code, and so their own country in a phone number's parse. */
const TERRITORIES: ReadonlySet<string> = new Set(['AS', 'GU', 'MP', 'PR', 'UM', 'VI']);

/** The ISO 3166-2 region of a US territory given as its country (PR -> US-PR), or null. */
export function territoryRegion(country: string): string | null {
  return TERRITORIES.has(country) ? `US-${country}` : null;
}
