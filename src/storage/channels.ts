// PostgreSQL NOTIFY channels: statements that change calls or deliveries notify them; the dispatchers and the
// webhook workers LISTEN.
/** A call became due or a slot freed: dispatchers look for calls to claim. */
export const CALLS_CHANNEL = 'oct_calls';
/** A delivery was queued: webhook workers look for deliveries to send. */
export const WEBHOOKS_CHANNEL = 'oct_webhooks';
