// The addresses an agent hands its answered calls to: a stream's wss:// URL and a SIP URI, checked by their text and
// read into their stored form (src/domain/hand-off-settings.ts has the rest of the hand-off).
//
// Addresses are judged by their text only, never resolved here: the service never connects to them (the carrier does,
// from its own network), a name's answer at save time says nothing of its answer at dial time, and a save must not
// wait on DNS. What the text alone shows can never be a runtime on the internet is refused: a literal loopback,
// private, link-local or metadata address (isPrivateAddress, the webhooks' one address policy) and local names such
// as localhost, unless development allows private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS).
import { isIP } from 'node:net';
import { HANDOFF_URI_MAX } from '../../schemas/agent-runtime.js';
import { isPrivateAddress, LOCAL_NAMES } from '../webhooks/url-policy.js';
import { TWILIO_SIP_URI_MAX } from './hand-off-contract.js';

export const HANDOFF_KINDS = ['stream', 'sip'] as const;
export type HandoffKind = (typeof HANDOFF_KINDS)[number];

export class HandoffSettingError extends Error {
  override name = 'HandoffSettingError';
}

/** Control characters (C0, DEL, C1), UTF-16 halves without their partner; blanks are refused in addresses apart. */
export const UNPRINTABLE = /[\p{Cc}\p{Cs}]/u;
const BLANK = /\s/u;
export const characters = (text: string) => [...text].length;

/** Where the address's problem is put: the stream's or the SIP destination's. */
export const WORDS = {
  stream: { what: 'The stream URL', example: 'wss://bot.example.com/stream' },
  sip: { what: 'The SIP address', example: 'sip:bot@sip.example.com;transport=tls' },
} as const;

/** What is wrong with the text of an address, whatever its kind, or null. */
function addressTextProblem(kind: HandoffKind, text: string): string | null {
  const { what } = WORDS[kind];
  // A SIP address must stay under 255 characters with Twilio (the headers follow it, after `?`).
  const max = kind === 'sip' ? TWILIO_SIP_URI_MAX : HANDOFF_URI_MAX;
  if (characters(text) > max) return `${what} has at most ${max} characters`;
  if (UNPRINTABLE.test(text)) return `${what} must not contain control characters (line breaks, tabs, NUL)`;
  if (BLANK.test(text)) return `${what} must not contain blanks`;
  if (text.includes('\\')) return `${what} must not contain a backslash`;
  if (/%(?:[01][0-9a-f]|7f)/i.test(text))
    return `${what} must not contain encoded control characters (%00 to %1F, %7F)`;
  return null;
}

/** Why a host may not be handed calls, or null. */
function hostProblem(kind: HandoffKind, host: string, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  const bare = host.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (!isPrivateAddress(bare) && !LOCAL_NAMES.test(bare)) return null;
  return (
    `${WORDS[kind].what}'s host ${host} is a private, loopback or link-local address, which the carrier cannot ` +
    'reach: use an address reachable on the internet'
  );
}

/**
 * The stream URL as stored (the URL parser's form: what was checked is what is used), or a HandoffSettingError:
 * wss:// only, at most HANDOFF_URI_MAX characters, no credentials, no blank or control character, and no local host.
 */
export function parseStreamUrl(value: string, allowPrivate: boolean): string {
  const text = value.trim();
  const { what, example } = WORDS.stream;
  const problem = addressTextProblem('stream', text);
  if (problem) throw new HandoffSettingError(problem);
  if (!/^wss:\/\//i.test(text))
    throw new HandoffSettingError(`${what} must start with wss:// (a secure WebSocket), e.g. ${example}`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HandoffSettingError(`${what} is not a valid URL, e.g. ${example}`);
  }
  if (url.username || url.password || text.slice(6).split(/[/?#]/)[0]!.includes('@'))
    throw new HandoffSettingError(`${what} must not contain a user name or password`);
  if (!url.hostname) throw new HandoffSettingError(`${what} needs a host, e.g. ${example}`);
  if (url.port === '0') throw new HandoffSettingError(`${what}'s port must be from 1 to 65535, not 0`);
  const host = hostProblem('stream', url.hostname, allowPrivate);
  if (host) throw new HandoffSettingError(host);
  if (characters(url.href) > HANDOFF_URI_MAX)
    throw new HandoffSettingError(`${what} has at most ${HANDOFF_URI_MAX} characters once encoded`);
  return url.href;
}

const SIP_USER = "(?:[A-Za-z0-9\\-_.!~*'()&=+$,/]|%[0-9A-Fa-f]{2})+";
const SIP_NAME = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const SIP_HOST = `(?:${SIP_NAME}(?:\\.${SIP_NAME})*\\.?|\\[[0-9A-Fa-f:.]+\\])`;
const SIP_PARAM = "(?:[A-Za-z0-9\\-_.!~*'()&+$\\[\\]/:]|%[0-9A-Fa-f]{2})+";
const SIP_URI = new RegExp(
  `^(sips?):(${SIP_USER})@(${SIP_HOST})(?::(\\d{1,5}))?((?:;${SIP_PARAM}(?:=${SIP_PARAM})?)*)$`,
  'i',
);

/** A name whose last label is not all digits, a dotted IPv4 address, or a bracketed IPv6 one (not 0x7f.1 or 2130706433). */
function isSipHost(host: string): boolean {
  if (host.startsWith('[')) return isIP(host.slice(1, -1)) === 6;
  const last = host.replace(/\.$/, '').split('.').at(-1)!;
  return /^\d+$/.test(last) ? isIP(host) === 4 : !/^0x[0-9a-f]+$/i.test(last);
}

/**
 * The SIP URI as stored (its scheme in lower case), or a HandoffSettingError: sip: or sips:, user@host[:port] and
 * ;parameters, at most TWILIO_SIP_URI_MAX characters, no header part (`?`: the static headers are their own setting),
 * no blank or control character, and no local host.
 */
export function parseSipUri(value: string, allowPrivate: boolean): string {
  const text = value.trim();
  const { what, example } = WORDS.sip;
  const problem = addressTextProblem('sip', text);
  if (problem) throw new HandoffSettingError(problem);
  if (!/^sips?:/i.test(text)) throw new HandoffSettingError(`${what} must start with sip: or sips:, e.g. ${example}`);
  if (text.includes('?'))
    throw new HandoffSettingError(`${what} must not carry headers (?...): give them as SIP headers, X-Name=value`);
  const match = SIP_URI.exec(text);
  if (!match)
    throw new HandoffSettingError(
      `${what} must read user@host, with an optional :port and ;parameters, e.g. ${example}`,
    );
  const [, scheme, user, host, port, params] = match as unknown as [
    string,
    string,
    string,
    string,
    string | undefined,
    string,
  ];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535))
    throw new HandoffSettingError(`${what}'s port must be from 1 to 65535, not ${port}`);
  if (!isSipHost(host)) throw new HandoffSettingError(`${what}'s host ${host} is not a host name or an IP address`);
  const local = hostProblem('sip', host, allowPrivate);
  if (local) throw new HandoffSettingError(local);
  return `${scheme.toLowerCase()}:${user}@${host}${port === undefined ? '' : `:${port}`}${params}`;
}
