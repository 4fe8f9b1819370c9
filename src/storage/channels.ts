// PostgreSQL NOTIFY channels: statements that change calls or deliveries notify them; the dispatchers and the
// webhook workers LISTEN.
/** A call became due or a slot freed: dispatchers look for calls to claim. */
export const CALLS_CHANNEL = 'oct_calls';
/**
 * The payload of a NOTIFY on CALLS_CHANNEL by which the leading dispatcher asks the others to help: more accounts had
 * calls due than its claim took (the others' payloads are an account id, or none).
 */
export const BACKLOG_PAYLOAD = 'backlog';
/** A delivery was queued: webhook workers look for deliveries to send. */
export const WEBHOOKS_CHANNEL = 'oct_webhooks';
