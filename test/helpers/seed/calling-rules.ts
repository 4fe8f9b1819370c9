// Calling rules (issue 48) written straight to the database: an account's stored settings, a call's declared region
// and consent, and the dial ledger's past dials, for the dispatcher's tests of holds and caps (test/helpers/seed.ts says when a
// test writes directly). The settings' own admin function and the trigger's recipient_region are another change's;
// these write what they store, so that the dispatcher's reading of it is tested on its own.
import type { PrismaClient } from '../../../src/generated/prisma/client.js';
import type { AgencyCallingRulesData, ClientCallingRulesData } from '../../../schemas/compliance.js';
import { bulk, type Db } from './bulk.js';

/** An agency's settings switched on: the US rules, every call kind (the strictest), no cap, no consent needed. */
export const RULES_ON: AgencyCallingRulesData = {
  enabled: true,
  rule_sets: ['us'],
  call_kinds: ['telephone_solicitation', 'telemarketing', 'automated'],
  own_rules: [],
  cap: null,
  consent_required: false,
};

/** accounts.calling_rules as the settings store it (an agency's, or a client's narrower hours); null: none. */
export async function storeCallingRules(
  prisma: PrismaClient,
  accountId: string,
  rules: AgencyCallingRulesData | ClientCallingRulesData | null,
): Promise<void> {
  await bulk(prisma, `UPDATE accounts SET calling_rules = $2::jsonb WHERE id = $1::uuid`, [
    accountId,
    rules === null ? null : JSON.stringify(rules),
  ]);
}

/** A call's recipient_region as the trigger stores it (ISO 3166-2), set after acceptance (a region change). */
export async function storeRecipientRegion(prisma: PrismaClient, callId: string, region: string | null): Promise<void> {
  await bulk(prisma, `UPDATE calls SET recipient_region = $2 WHERE id = $1::uuid`, [callId, region]);
}

export interface PastDial {
  agencyId: string;
  accountId: string;
  phoneNumber: string;
  dialedAt: Date;
  /** Default: a call id of its own (a dial of a call that is not in this database's calls). */
  callId?: string;
  attempt?: number;
}

/** Dials made before the test's calls (another client's, or before the cap was switched on), as the ledger holds them. */
export async function insertPastDials(db: Db, dials: PastDial[]): Promise<void> {
  await bulk(
    db,
    `INSERT INTO callee_dials (call_id, attempt, agency_id, account_id, phone_number, dialed_at)
     SELECT coalesce(d.call_id, gen_random_uuid()), d.attempt, d.agency_id, d.account_id, d.phone_number, d.dialed_at
       FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::uuid[], $5::text[], $6::timestamptz[])
            AS d(call_id, attempt, agency_id, account_id, phone_number, dialed_at)`,
    [
      dials.map((d) => d.callId ?? null),
      dials.map((d) => d.attempt ?? 1),
      dials.map((d) => d.agencyId),
      dials.map((d) => d.accountId),
      dials.map((d) => d.phoneNumber),
      dials.map((d) => d.dialedAt),
    ],
  );
}
