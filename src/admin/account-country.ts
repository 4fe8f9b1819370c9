// The account's country, the one rule for every form people type numbers into (an agent's caller ID, do-not-call add
// and import, callctl dnc): a number written without its country code is read as one of it (docs/dashboard.md).
import { DEFAULT_COUNTRY, mostCommonCountry } from '../domain/typed-phone-number.js';
import type { Storage } from '../storage/index.js';

/** Agents whose caller IDs are counted: the oldest, so that a new agent does not move an established account. */
const COUNTED_AGENTS = 100;

/**
 * The country most of the caller IDs of `account`'s agents in use belong to (an agency's with its clients'; the
 * oldest hundred; a tie goes to the oldest agent's country); a client whose agents say none takes its agency's; else
 * DEFAULT_COUNTRY (the United States).
 */
export async function accountCountry(
  storage: Storage,
  account: { id: string; agencyId: string | null },
): Promise<string> {
  const own = mostCommonCountry(await storage.agents.callerIdsOf(account, COUNTED_AGENTS));
  if (own !== undefined || account.agencyId === null) return own ?? DEFAULT_COUNTRY;
  const agency = { id: account.agencyId, agencyId: null };
  return mostCommonCountry(await storage.agents.callerIdsOf(agency, COUNTED_AGENTS)) ?? DEFAULT_COUNTRY;
}
