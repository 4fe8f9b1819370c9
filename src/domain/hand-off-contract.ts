// The hand-off's contract (docs/agent-runtime.md): what every answered call carries to the voice-agent runtime, by
// stream parameter and SIP header name, and the carrier's limits it must fit. A leaf of src/domain: the agent's
// settings are checked against it (hand-off-settings.ts) and the dispatcher builds the hand-off by it
// (src/dispatch/hand-off.ts).

/** Every hand-off's `direction`: the service places calls through the provider's REST API. */
export const HANDOFF_DIRECTION = 'outbound-api';

/** What every hand-off carries, in order: the stream parameter's name and the SIP header's. */
export const CARRIED = [
  { parameter: 'call_id', header: 'X-Call-Id' },
  { parameter: 'agent_id', header: 'X-Agent-Id' },
  { parameter: 'account_id', header: 'X-Account-Id' },
  { parameter: 'from_number', header: 'X-From-Number' },
  { parameter: 'to_number', header: 'X-To-Number' },
  { parameter: 'direction', header: 'X-Direction' },
  { parameter: 'attempt', header: 'X-Attempt' },
  { parameter: 'name', header: 'X-Name' },
  { parameter: 'email', header: 'X-Email' },
  // The agent's static parameters or headers come here, before the token.
  { parameter: 'context_token', header: 'X-Context-Token' },
] as const;

/** Names the service's values own: an agent's static parameter or header of one of these names is never sent. */
export const RESERVED_STREAM_PARAMETERS: readonly string[] = CARRIED.map((c) => c.parameter);
export const RESERVED_SIP_HEADERS: readonly string[] = CARRIED.map((c) => c.header);

/**
 * Twilio's limits (TwiML <Sip>, warnings 13251 and 21227): the SIP URI under 255 characters, its headers portion
 * (after `?`) under 1,024. A <Parameter>'s name and value together stay under 500 (TwiML <Stream>).
 */
export const TWILIO_SIP_URI_MAX = 254;
export const TWILIO_SIP_HEADERS_MAX = 1023;
export const TWILIO_PARAMETER_MAX = 499;
/**
 * The longest the call's own headers can be in the URI, without X-Name and X-Email: three ids, two E.164 numbers of
 * 15 digits (`+` encoded), the direction, attempt 5 and the token (test/dispatch/agent-hand-off.test.ts measures it).
 */
export const SIP_CARRIED_MAX = 341;
/**
 * What an agent's static headers may take of the headers portion, as `&Name=percent-encoded value` each, for all of
 * them always to be sent (the agent form's bound; at call time the last ones that do not fit are left out).
 */
export const SIP_STATIC_HEADERS_BUDGET = TWILIO_SIP_HEADERS_MAX - SIP_CARRIED_MAX;
/** Dropped first, in this order, when the headers would not fit: both are in the context the runtime fetches. */
export const SIP_DROPPABLE = ['X-Name', 'X-Email'] as const;

/** A carried value's parameter name. */
export type Carried = (typeof CARRIED)[number]['parameter'];

/**
 * A header value as a SIP URI carries it: line breaks, tabs and every other control or separator character become a
 * space (a header cannot hold them, and Twilio would drop the header: warning 32112), a lone surrogate U+FFFD, and
 * then every character but letters, digits and `-._~` is percent-encoded as UTF-8.
 */
export function sipHeaderValue(value: string): string {
  const clean = value.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ').replace(/\p{Cs}/gu, '\uFFFD');
  return encodeURIComponent(clean).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The length static headers take in the SIP URI's headers portion: `&Name=percent-encoded value` each. */
export function staticHeadersLength(pairs: readonly { name: string; value: string }[]): number {
  return pairs.reduce((sum, pair) => sum + 1 + pair.name.length + 1 + sipHeaderValue(pair.value).length, 0);
}
