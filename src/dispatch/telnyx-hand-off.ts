// The SIP hand-off on Telnyx: the agent's SIP URI as a transfer's destination and what every hand-off carries as the
// INVITE's X- headers (Call Control's custom_headers), rather than inside the URI as on Twilio.
import type { HandoffPair } from '../../schemas/agent-runtime.js';
import { sipHeaderValue } from '../domain/hand-off-contract.js';
import type { TelnyxCommand } from './telnyx-dialer.js';

/** A header value as the INVITE carries it: the text of its percent-encoded form, the one rule for every carrier. */
function headerText(value: string): string {
  return decodeURIComponent(sipHeaderValue(value));
}

/** Decodes a URI header's name or value; one that is not valid percent-encoding is kept as written. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The transfer that hands the call over: to the agent's URI without its `?` part, with the URI's own headers first
 * and then `pairs` (handOffPairs('sip', ...)), in order. Values are sent as text (control and separator characters
 * as spaces, as the URI's percent-encoding reads back on Twilio). Telnyx sets no budget on custom_headers, so nothing
 * is left out (Twilio's URI budget drops X-Name and X-Email first).
 */
export function sipTransfer(
  sipUri: string,
  pairs: readonly HandoffPair[],
): Extract<TelnyxCommand, { action: 'transfer' }> {
  const query = sipUri.indexOf('?');
  const own =
    query === -1
      ? []
      : sipUri
          .slice(query + 1)
          .split('&')
          .filter((part) => part.includes('='))
          .map((part) => {
            const at = part.indexOf('=');
            return { name: decoded(part.slice(0, at)), value: decoded(part.slice(at + 1)) };
          });
  return {
    action: 'transfer',
    to: query === -1 ? sipUri : sipUri.slice(0, query),
    headers: [...own, ...pairs].map(({ name, value }) => ({ name, value: headerText(value) })),
  };
}
