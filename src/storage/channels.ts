// PostgreSQL NOTIFY channels: statements that change calls or deliveries notify them; the leading dispatcher and the
// leading webhook worker LISTEN.
/** A call became due or a slot freed: dispatchers look for calls to claim. */
export const CALLS_CHANNEL = 'oct_calls';
/**
 * The start of a NOTIFY's payload on CALLS_CHANNEL by which a following dispatcher hands the leader the accounts whose
 * calls it accepted (comma-separated ids follow): the leader claims for them as for its own acceptances. Told apart
 * from a freed slot's payload (one account id), for which the leader claims for that account alone.
 */
export const ACCEPTED_PREFIX = 'accepted:';
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7_999;

/** The payloads handing `accountIds` to the leader: as few as fit, each under PostgreSQL's limit. */
export function acceptedPayloads(accountIds: readonly string[]): string[] {
  const payloads: string[] = [];
  let current = '';
  for (const id of accountIds) {
    const next = current ? `${current},${id}` : `${ACCEPTED_PREFIX}${id}`;
    if (current && Buffer.byteLength(next) > MAX_PAYLOAD_BYTES) {
      payloads.push(current);
      current = `${ACCEPTED_PREFIX}${id}`;
    } else current = next;
  }
  if (current) payloads.push(current);
  return payloads;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The account ids of a hand-off payload (acceptedPayloads); null for any other payload. Ids that are not UUIDs are
 * dropped: one would fail the whole claim it joins (anyone who may connect can NOTIFY).
 */
export function acceptedAccounts(payload: string | null): string[] | null {
  if (!payload?.startsWith(ACCEPTED_PREFIX)) return null;
  return payload
    .slice(ACCEPTED_PREFIX.length)
    .split(',')
    .filter((id) => UUID.test(id));
}
/**
 * The accounts a NOTIFY on CALLS_CHANNEL names, for the leader to claim for: a hand-off's (acceptedAccounts), or the
 * one account whose slot freed (a transition's payload, storage/calls.ts); null for any other payload, which asks
 * which accounts are due. A freed slot can make only its own account's calls dialable: asking which accounts are due
 * for it read every account with a queue on every call's end (bench:scale's tenants database: a sequential scan of
 * 10,200 accounts, 1.7 ms, on every claim pass that followed a call's end).
 */
export function notifiedAccounts(payload: string | null): string[] | null {
  if (payload !== null && UUID.test(payload)) return [payload];
  return acceptedAccounts(payload);
}
/** A delivery was queued: webhook workers look for deliveries to send. */
export const WEBHOOKS_CHANNEL = 'oct_webhooks';
