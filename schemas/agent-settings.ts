// The bounds of an agent's retry and voicemail settings, written once: src/domain/agent-settings.ts checks them
// (callctl and the dashboard alike) and the dashboard's agent form states them in its schema. A leaf.

/** How many waits a retry policy lists; the last repeats for the attempts after them. */
export const RETRY_WAITS_MAX = 3;
/** The longest wait between two attempts, in minutes: 7 days. */
export const RETRY_WAIT_MAX_MINUTES = 7 * 24 * 60;
/** The one placeholder a voicemail message may use: replaced by the trigger's `name`. */
export const VOICEMAIL_NAME_PLACEHOLDER = '{{name}}';
