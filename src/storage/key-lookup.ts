// The keys on the request path, prepared on the pool: the lookup every authenticated request makes and the touch
// after it. Hand-written: a named statement costs a fraction of a Prisma query's CPU, on every request.
import type pg from 'pg';
import { apiAccessOn, governingPlan } from '../domain/api-access.js';
import type { Principal } from '../domain/principal.js';
import type { WindowTimezone } from '../../schemas/vocabulary.js';
import type { PoolDriver } from './driver.js';
import { KeyRepository } from './keys.js';
import { statement } from './statements.js';

interface PrincipalRow {
  key_id: string;
  account_id: string;
  kind: 'agency' | 'client';
  agency_id: string;
  account_plan: string | null;
  agency_plan: string | null;
  account_switch: boolean;
  agency_switch: boolean | null;
  default_agent_id: string | null;
  d_account_id: string | null;
  d_agency_id: string | null;
  d_phone_number: string | null;
  d_timezone: string | null;
  d_calling_windows: unknown;
  d_outside_window_policy: 'queue' | 'reject' | null;
  d_window_timezone: WindowTimezone | null;
  d_consent_required: boolean | null;
  account_rules: unknown;
  agency_rules: unknown;
}

// Hand-written: the hot path (every request, refusals included), a named statement costs a fraction of a Prisma
// query's CPU. It reads the account's default agent too, which most triggers use: it saves them a round trip later.
// Enums are cast to text; pg returns uuids as strings, booleans as booleans and jsonb parsed. It reads the plans and
// switches as stored: the mapper decides with the API-access rule (src/domain/api-access.ts). The calling-rules
// settings of the account and its agency ride along (null, nothing to parse, while the rules are off): the trigger
// checks consent and the permitted hours without a round trip of its own.
const KEY_LOOKUP = statement(
  'oct_key_lookup',
  `
  SELECT k.id AS key_id, a.id AS account_id, a.kind, COALESCE(a.agency_id, a.id) AS agency_id,
         a.plan::text AS account_plan, g.plan::text AS agency_plan,
         a.api_access_enabled AS account_switch, g.api_access_enabled AS agency_switch,
         a.default_agent_id, d.account_id AS d_account_id, d.agency_id AS d_agency_id,
         d.phone_number AS d_phone_number, d.timezone AS d_timezone, d.calling_windows AS d_calling_windows,
         d.outside_window_policy::text AS d_outside_window_policy, d.window_timezone::text AS d_window_timezone,
         d.consent_required AS d_consent_required, a.calling_rules AS account_rules, g.calling_rules AS agency_rules
    FROM api_keys k
    JOIN accounts a ON a.id = k.account_id
    LEFT JOIN accounts g ON g.id = a.agency_id
    LEFT JOIN agents d ON d.id = a.default_agent_id
   WHERE k.digest = $1 AND k.revoked_at IS NULL`,
);

// Hand-written: after the response of every authenticated request (at most once a minute per key and process); a
// named statement costs a fraction of a Prisma update. Never moves the time back (replicas write in any order).
const TOUCH_KEYS = statement(
  'oct_touch_keys',
  `
  UPDATE api_keys k SET last_used_at = u.at
    FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, at)
   WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`,
);

/** The pool side of the keys: the Prisma repository and the request path's two statements. */
export class KeyLookupRepository extends KeyRepository {
  private readonly pool: pg.Pool;

  constructor(driver: PoolDriver) {
    super(driver);
    this.pool = driver.pool;
  }

  /** The principal of the unrevoked key with this digest, with its account's default agent; null when there is none. */
  async findPrincipalByKeyDigest(digest: Buffer): Promise<Principal | null> {
    const [row] = (await this.pool.query<PrincipalRow>({ ...KEY_LOOKUP, values: [digest] })).rows;
    if (!row) return null;
    return {
      keyId: row.key_id,
      accountId: row.account_id,
      accountKind: row.kind,
      agencyId: row.agency_id,
      plan: governingPlan(row.account_plan, row.agency_plan),
      apiAccessEnabled: apiAccessOn(row.account_switch, row.agency_switch),
      defaultAgentId: row.default_agent_id,
      defaultAgent:
        row.default_agent_id && row.d_account_id
          ? {
              id: row.default_agent_id,
              accountId: row.d_account_id,
              agencyId: row.d_agency_id!,
              phoneNumber: row.d_phone_number,
              timezone: row.d_timezone!,
              callingWindows: row.d_calling_windows,
              outsideWindowPolicy: row.d_outside_window_policy!,
              windowTimezone: row.d_window_timezone!,
              consentRequired: row.d_consent_required!,
            }
          : null,
      callingRules:
        row.kind === 'agency'
          ? { agency: row.account_rules, client: null }
          : { agency: row.agency_rules, client: row.account_rules },
    };
  }

  /** Records when each key was last used. */
  async touchApiKeys(uses: { keyId: string; at: Date }[]): Promise<void> {
    await this.pool.query({ ...TOUCH_KEYS, values: [uses.map((u) => u.keyId), uses.map((u) => u.at)] });
  }
}
