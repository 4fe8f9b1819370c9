// What an answered call carries to the voice-agent runtime (docs/agent-runtime.md): one ordered list of values, sent
// as Twilio stream parameters or as SIP X- headers, and the SIP URI that carries the headers within Twilio's budget.
import { SIP_HEADER_NAME, STREAM_PARAMETER_NAME, type HandoffPair } from '../../schemas/agent-runtime.js';
import {
  CARRIED,
  HANDOFF_DIRECTION,
  RESERVED_SIP_HEADERS,
  RESERVED_STREAM_PARAMETERS,
  SIP_DROPPABLE,
  sipHeaderValue,
  TWILIO_SIP_HEADERS_MAX,
  type Carried,
} from '../domain/hand-off-contract.js';

/** The call's columns a hand-off reads. */
export interface HandOffCall {
  id: string;
  agentId: string;
  accountId: string;
  fromNumber: string;
  /** The callee. */
  phoneNumber: string;
  attempt: number;
  name: string | null;
  email: string | null;
}

/** The call's own values by parameter name; a trigger without a name or email sends none (absent, never ""). */
function carried(call: HandOffCall, token: string): Record<Carried, string | null> {
  return {
    call_id: call.id,
    agent_id: call.agentId,
    account_id: call.accountId,
    from_number: call.fromNumber,
    to_number: call.phoneNumber,
    direction: HANDOFF_DIRECTION,
    attempt: String(call.attempt),
    name: call.name,
    email: call.email,
    context_token: token,
  };
}

/**
 * An agent's static pairs (its stream_parameters or sip_headers column) as stored, in order: only well-formed pairs
 * whose name fits `pattern` and is not one the service's values own (compared without case for SIP headers), nor for
 * SIP an `X-Twilio-` header, which Twilio leaves out of the INVITE (warning 32113).
 */
export function staticPairs(json: unknown, kind: 'stream' | 'sip'): HandoffPair[] {
  if (!Array.isArray(json)) return [];
  const pattern = new RegExp(kind === 'stream' ? STREAM_PARAMETER_NAME : SIP_HEADER_NAME);
  const reserved = new Set(
    (kind === 'stream' ? RESERVED_STREAM_PARAMETERS : RESERVED_SIP_HEADERS).map((n) => n.toLowerCase()),
  );
  return json.filter(
    (p): p is HandoffPair =>
      typeof p === 'object' &&
      p !== null &&
      typeof (p as HandoffPair).name === 'string' &&
      typeof (p as HandoffPair).value === 'string' &&
      pattern.test((p as HandoffPair).name) &&
      !reserved.has((p as HandoffPair).name.toLowerCase()) &&
      !(kind === 'sip' && /^x-twilio/i.test((p as HandoffPair).name)),
  );
}

/** Everything a hand-off carries, in order, named for `kind`: the call's values, the agent's statics, the token. */
export function handOffPairs(
  kind: 'stream' | 'sip',
  call: HandOffCall,
  statics: readonly HandoffPair[],
  token: string,
): HandoffPair[] {
  const values = carried(call, token);
  const pairs: HandoffPair[] = [];
  for (const field of CARRIED) {
    if (field.parameter === 'context_token') pairs.push(...statics);
    const value = values[field.parameter];
    if (value !== null) pairs.push({ name: kind === 'stream' ? field.parameter : field.header, value });
  }
  return pairs;
}

export interface SipTarget {
  /** The agent's URI with the headers appended (`?X-Call-Id=...&...`). */
  uri: string;
  /** The headers portion's length (after `?`), within TWILIO_SIP_HEADERS_MAX unless `overBudget`. */
  headersLength: number;
  /** The headers left out to fit, in the order they were dropped. */
  dropped: string[];
  /** Even without the droppable and static headers it does not fit: sent anyway, Twilio may drop headers. */
  overBudget: boolean;
}

/**
 * The SIP URI that hands the call over: the agent's URI with every header of `pairs` (handOffPairs('sip', ...)) as
 * URI headers. When the headers portion would pass Twilio's budget, X-Name and then X-Email are dropped (the runtime
 * reads both from the context), then the agent's static headers from the last; the call's identifiers and the token
 * are always sent. Nothing is refused at call time.
 */
export function sipTarget(sipUri: string, pairs: readonly HandoffPair[]): SipTarget {
  const query = sipUri.indexOf('?');
  const base = query === -1 ? sipUri : sipUri.slice(0, query);
  const own = query === -1 ? '' : sipUri.slice(query + 1);
  const encoded = pairs.map((p) => ({ name: p.name, text: `${p.name}=${sipHeaderValue(p.value)}` }));
  const lengthOf = (list: typeof encoded) => [own, ...list.map((e) => e.text)].filter((t) => t !== '').join('&').length;
  const carriedHeaders = new Set<string>(RESERVED_SIP_HEADERS);
  const dropOrder = [
    ...SIP_DROPPABLE,
    ...encoded
      .filter((e) => !carriedHeaders.has(e.name))
      .map((e) => e.name)
      .reverse(),
  ];
  let kept = encoded;
  const dropped: string[] = [];
  for (const name of dropOrder) {
    if (lengthOf(kept) <= TWILIO_SIP_HEADERS_MAX) break;
    if (!kept.some((e) => e.name === name)) continue;
    kept = kept.filter((e) => e.name !== name);
    dropped.push(name);
  }
  const headers = [own, ...kept.map((e) => e.text)].filter((t) => t !== '').join('&');
  return {
    uri: headers === '' ? base : `${base}?${headers}`,
    headersLength: headers.length,
    dropped,
    overBudget: headers.length > TWILIO_SIP_HEADERS_MAX,
  };
}
