// The account page's model: what src/views/pages/account.eta reads (with the partials it includes).
import type { KeysOf, PasswordPolicy, Problem } from './model-parts.js';

/** The time-zone form: the zone selected, where it came from, its problem and the zones offered. */
export interface ZoneField {
  /** The zone selected: the user's own (or what they just sent), else UTC. */
  value: string;
  /** Never chosen: a script selects the browser's zone (src/views/assets/zone-default.js); no script, UTC. */
  fromBrowser: boolean;
  /** Why the zone sent was refused, shown next to the field; null when it was not. */
  problem: string | null;
  /** UTC's other names, the canonical zones by region, and a value the list lacks (else null). */
  choices: {
    utcAliases: string[];
    regions: { region: string; zones: { value: string; place: string; aliases: string[] }[] }[];
    other: string | null;
  };
}

export type AccountModel = { lastSignIn: string | null; policy: PasswordPolicy; problem: Problem; zone: ZoneField };

/** The fields account.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const ACCOUNT_FIELDS = [
  'lastSignIn',
  'policy',
  'problem',
  'zone',
] as const satisfies readonly KeysOf<AccountModel>[];
