// The carrier a call's attempt is dialled with (issue 50.3), as the dispatcher's reads find it: the account's own (an
// agency's; a client's while its agency lets clients choose), else its agency's, else none (the environment's), read
// with the claim's candidates and with stale claims, so that no dial costs a query of its own. And the dial's intent,
// which records the carrier on the call for its callbacks, its live-call changes and the simulated dialer's advance.
import type { CarrierProvider } from '../../schemas/carrier.js';
import { statement } from './statements.js';

/**
 * The account carrier a call is dialled through (null: the environment's). `updatedAt` is the carrier row's, as JSON
 * text: a dialer built from its credentials is kept until the row changes.
 */
export interface CarrierInUse {
  accountId: string;
  provider: CarrierProvider;
  updatedAt: string;
}

/** The carrier the call's account dials through now, read with a call about to be dialled (a claim, a takeover). */
export interface DialCarrier {
  carrierInUse: CarrierInUse | null;
}

/** For `accounts acc LEFT JOIN accounts agy ON agy.id = acc.agency_id`: the carrier rows that may apply (PK probes). */
export const CARRIER_IN_USE_JOINS = `
    LEFT JOIN account_carriers own_car ON own_car.account_id = acc.id AND (acc.agency_id IS NULL OR agy.clients_choose_carrier)
    LEFT JOIN account_carriers agy_car ON agy_car.account_id = acc.agency_id AND own_car.account_id IS NULL`;

/** The account's own carrier row first, then its agency's: a CarrierInUse, or null. */
export const CARRIER_IN_USE_COLUMN = `CASE
    WHEN own_car.account_id IS NOT NULL
      THEN json_build_object('accountId', own_car.account_id, 'provider', own_car.provider, 'updatedAt', own_car.updated_at)
    WHEN agy_car.account_id IS NOT NULL
      THEN json_build_object('accountId', agy_car.account_id, 'provider', agy_car.provider, 'updatedAt', agy_car.updated_at)
    END AS "carrierInUse"`;

/** What a dial's intent records: the call, and the carrier it is about to be dialled with. */
export interface DialIntent {
  id: string;
  carrier: 'simulated' | CarrierProvider;
  /** The account whose own carrier it is; null: the environment's. */
  carrierAccountId: string | null;
}

/**
 * The intent to dial, recorded before dialling, per attempt: dial_attempts is the last attempt whose intent is
 * recorded, so an attempt whose intent is recorded (dial_attempts >= attempt) is never dialled again, and the next
 * attempt of a retried call (attempt + 1) can be. With it, the carrier the attempt is dialled with.
 */
export const RECORD_INTENTS = statement(
  'oct_record_intents',
  `
  UPDATE calls c SET dial_attempts = c.attempt, updated_at = $3, carrier = u.carrier, carrier_account_id = u.carrier_account_id
    FROM unnest($1::uuid[], $4::text[], $5::uuid[]) AS u(id, carrier, carrier_account_id)
   WHERE c.id = u.id AND c.status = 'dialing' AND c.lease_owner = $2 AND c.dial_attempts < c.attempt
  RETURNING c.id`,
);

export function recordIntentsValues(intents: DialIntent[], owner: string) {
  return [
    intents.map((i) => i.id),
    owner,
    new Date(),
    intents.map((i) => i.carrier),
    intents.map((i) => i.carrierAccountId),
  ];
}
