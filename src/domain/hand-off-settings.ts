// An agent's hand-off as people write it (callctl's flags, the dashboard's fields): the kind, the addresses
// (src/domain/hand-off-addresses.ts checks them) and the static name/value pairs, each checked on its own in words that
// fit both, then read into stored values.
import {
  HANDOFF_STATIC_MAX,
  HANDOFF_VALUE_MAX,
  SIP_HEADER_NAME,
  STREAM_PARAMETER_NAME,
  type HandoffPair,
} from '../../schemas/agent-runtime.js';
import {
  characters,
  HANDOFF_KINDS,
  HandoffSettingError,
  parseSipUri,
  parseStreamUrl,
  UNPRINTABLE,
  WORDS,
  type HandoffKind,
} from './hand-off-addresses.js';
import {
  RESERVED_SIP_HEADERS,
  RESERVED_STREAM_PARAMETERS,
  SIP_STATIC_HEADERS_BUDGET,
  staticHeadersLength,
} from './hand-off-contract.js';

export { HANDOFF_KINDS, HandoffSettingError, parseSipUri, parseStreamUrl, type HandoffKind };

export { RESERVED_SIP_HEADERS, RESERVED_STREAM_PARAMETERS };

const PAIR_WORDS = {
  stream: {
    what: 'Stream parameters',
    name: new RegExp(STREAM_PARAMETER_NAME),
    nameRule: '1 to 40 letters, digits or underscores',
    example: 'bot=sales',
    reserved: RESERVED_STREAM_PARAMETERS,
  },
  sip: {
    what: 'SIP headers',
    name: new RegExp(SIP_HEADER_NAME),
    nameRule: 'X- then 1 to 38 letters, digits or hyphens',
    example: 'X-Bot=sales',
    reserved: RESERVED_SIP_HEADERS,
  },
} as const;

/**
 * Static name/value pairs, each written "name=value" (the first = splits; blanks around both are dropped; blank items
 * are skipped), as stored in order, or a HandoffSettingError: at most HANDOFF_STATIC_MAX, names by the kind's rule and
 * each once (a header's name in any case), never a name the hand-off itself carries (in any case), values of at most
 * HANDOFF_VALUE_MAX printable characters.
 */
export function parseHandoffPairs(kind: HandoffKind, items: readonly string[]): HandoffPair[] {
  const words = PAIR_WORDS[kind];
  const given = items.filter((item) => item.trim() !== '');
  if (given.length > HANDOFF_STATIC_MAX)
    throw new HandoffSettingError(`${words.what}: at most ${HANDOFF_STATIC_MAX}, not ${given.length}`);
  const pairs: HandoffPair[] = [];
  const seen = new Set<string>();
  for (const item of given) {
    const at = item.indexOf('=');
    if (at < 0) throw new HandoffSettingError(`${words.what}: write each as name=value, e.g. ${words.example}`);
    const name = item.slice(0, at).trim();
    const value = item.slice(at + 1).trim();
    if (!words.name.test(name))
      throw new HandoffSettingError(`${words.what}: "${printable(name)}" is not a name (${words.nameRule})`);
    const key = kind === 'sip' ? name.toLowerCase() : name;
    if (words.reserved.some((reserved) => reserved.toLowerCase() === name.toLowerCase()))
      throw new HandoffSettingError(
        `${words.what}: ${name} is sent by the service itself with every call (${words.reserved.join(', ')}): choose another name`,
      );
    if (kind === 'sip' && /^x-twilio-/i.test(name))
      throw new HandoffSettingError(
        `${words.what}: ${name}: Twilio keeps X-Twilio- headers to itself: choose another name`,
      );
    if (seen.has(key)) throw new HandoffSettingError(`${words.what}: ${name} is given twice`);
    seen.add(key);
    if (UNPRINTABLE.test(value))
      throw new HandoffSettingError(`${words.what}: the value of ${name} must not contain control characters`);
    if (characters(value) > HANDOFF_VALUE_MAX)
      throw new HandoffSettingError(`${words.what}: the value of ${name} has at most ${HANDOFF_VALUE_MAX} characters`);
    pairs.push({ name, value });
  }
  // All of them must fit beside the call's own headers in the SIP address, or the last would be left out at call time.
  const length = kind === 'sip' ? staticHeadersLength(pairs) : 0;
  if (length > SIP_STATIC_HEADERS_BUDGET)
    throw new HandoffSettingError(
      `${words.what}: together at most ${SIP_STATIC_HEADERS_BUDGET} characters as the SIP address carries them ` +
        `(percent-encoded), not ${length}: use shorter values or fewer headers`,
    );
  return pairs;
}

/** A name as a message may quote it: control characters shown as U+XXXX, at most 60 characters. */
function printable(text: string): string {
  const shown = text.replace(
    /[\p{Cc}\p{Cs}]/gu,
    (c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`,
  );
  return shown.length > 60 ? `${shown.slice(0, 60)}...` : shown;
}

/** The stored pairs (a JSON column, perhaps edited by hand) as pairs; anything else is dropped. */
export function storedPairs(value: unknown): HandoffPair[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    const pair = item as { name?: unknown; value?: unknown } | null;
    return pair && typeof pair.name === 'string' && typeof pair.value === 'string'
      ? [{ name: pair.name, value: pair.value }]
      : [];
  });
}

/** Pairs as people write them: "name=value" each. */
export const pairTexts = (pairs: readonly HandoffPair[]) => pairs.map((pair) => `${pair.name}=${pair.value}`);

/** The hand-off's settings that must agree: a SIP hand-off needs its address. */
export function handoffProblem(handoff: HandoffKind, sipUri: string | null): string | null {
  return handoff === 'sip' && sipUri === null
    ? `A SIP hand-off needs the SIP address to hand calls to, e.g. ${WORDS.sip.example}`
    : null;
}

/** The kind of hand-off as given, or a HandoffSettingError. */
export function parseHandoffKind(value: string): HandoffKind {
  const kind = value.trim().toLowerCase();
  if ((HANDOFF_KINDS as readonly string[]).includes(kind)) return kind as HandoffKind;
  throw new HandoffSettingError(`The hand-off is stream or sip, not "${printable(value)}"`);
}

/** The hand-off as callctl and the dashboard give it; a field left out keeps its default or stored value. */
export interface HandoffInput {
  /** stream or sip. */
  handoff?: string | undefined;
  /** A wss:// URL; null: the service's AGENT_STREAM_URL. */
  streamUrl?: string | null | undefined;
  /** "name=value" each, replacing all of them (none: an empty list). */
  streamParameters?: readonly string[] | undefined;
  /** A sip: or sips: URI; null: none. */
  sipUri?: string | null | undefined;
  /** "X-Name=value" each, replacing all of them. */
  sipHeaders?: readonly string[] | undefined;
  /** Development: loopback and private hosts allowed (WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  allowPrivateTargets?: boolean | undefined;
}

/** The hand-off as stored. */
export interface HandoffFields {
  handoff: HandoffKind;
  streamUrl: string | null;
  streamParameters: HandoffPair[];
  sipUri: string | null;
  sipHeaders: HandoffPair[];
}

/** A new agent's hand-off: today's behaviour, the service's stream. */
export const DEFAULT_HANDOFF: HandoffFields = {
  handoff: 'stream',
  streamUrl: null,
  streamParameters: [],
  sipUri: null,
  sipHeaders: [],
};

/** The given hand-off fields, read into their stored values, or a HandoffSettingError saying what is wrong. */
export function givenHandoffFields(input: HandoffInput): Partial<HandoffFields> {
  const allowPrivate = input.allowPrivateTargets ?? false;
  const fields: Partial<HandoffFields> = {};
  if (input.handoff !== undefined) fields.handoff = parseHandoffKind(input.handoff);
  if (input.streamUrl !== undefined)
    fields.streamUrl = input.streamUrl === null ? null : parseStreamUrl(input.streamUrl, allowPrivate);
  if (input.streamParameters !== undefined)
    fields.streamParameters = parseHandoffPairs('stream', input.streamParameters);
  if (input.sipUri !== undefined)
    fields.sipUri = input.sipUri === null ? null : parseSipUri(input.sipUri, allowPrivate);
  if (input.sipHeaders !== undefined) fields.sipHeaders = parseHandoffPairs('sip', input.sipHeaders);
  return fields;
}

/**
 * What is wrong with the hand-off fields given, each on its own, and together when both the kind and the SIP address
 * are given (sip without an address), or null.
 */
export function handoffInputProblem(input: HandoffInput): string | null {
  try {
    const fields = givenHandoffFields(input);
    if (fields.handoff === undefined || fields.sipUri === undefined) return null;
    return handoffProblem(fields.handoff, fields.sipUri);
  } catch (error) {
    if (error instanceof HandoffSettingError) return error.message;
    throw error;
  }
}
