// API key format (svc_sk_ + base62 body + CRC32 checksum), its storage digest and Bearer header parsing.
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const API_KEY_PREFIX = 'svc_sk_';

export interface GeneratedApiKey {
  key: string;
  digest: Buffer;
  displayPrefix: string;
}

const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_BYTES = 32;
// 62^43 ≈ 2^256.03 is the smallest power of 62 that holds every 256-bit value, so any
// 32 random bytes fit without truncation and the key length never varies.
const BODY_LENGTH = 43;
// 62^6 ≈ 5.7e10 > 2^32 while 62^5 ≈ 9.2e8 is not, so six characters are needed for a CRC32.
const CHECKSUM_LENGTH = 6;
const DISPLAY_PREFIX_LENGTH = 12;
const API_KEY_LENGTH = API_KEY_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;
// Anchored and with a fixed repeat count so the match cost is bounded by the length check done first.
const API_KEY_SHAPE = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

// Fixed width keeps every key the same length, which is what lets the checksum sit at a known offset.
function encodeBase62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0n) {
    out = BASE62_ALPHABET[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  if (out.length > width) throw new RangeError(`value does not fit in ${width} base62 characters`);
  return out.padStart(width, '0');
}

// The checksum is at most 6 characters (< 2^53), so plain numbers are exact here and BigInt is not needed.
function decodeBase62Number(text: string): number {
  let value = 0;
  for (const ch of text) value = value * 62 + BASE62_ALPHABET.indexOf(ch);
  return value;
}

function checksumFor(prefixAndBody: string): string {
  return encodeBase62(BigInt(crc32(prefixAndBody)), CHECKSUM_LENGTH);
}

export function generateApiKey(): GeneratedApiKey {
  // Encoding the bytes as one big integer (rather than mapping bytes to characters with `% 62`)
  // keeps the characters unbiased and preserves all 256 bits of entropy.
  const body = encodeBase62(BigInt(`0x${randomBytes(RANDOM_BYTES).toString('hex')}`), BODY_LENGTH);
  const prefixAndBody = API_KEY_PREFIX + body;
  const key = prefixAndBody + checksumFor(prefixAndBody);
  return { key, digest: apiKeyDigest(key), displayPrefix: key.slice(0, DISPLAY_PREFIX_LENGTH) };
}

// Lets the auth layer answer "malformed key" without a database round-trip. Nothing secret is
// compared here (only the candidate against itself), so early exits leak nothing; the length check
// comes first so that an oversized header is rejected before anything scans it.
export function isWellFormedApiKey(candidate: string): boolean {
  if (typeof candidate !== 'string' || candidate.length !== API_KEY_LENGTH) return false;
  if (!API_KEY_SHAPE.test(candidate)) return false;
  const split = API_KEY_LENGTH - CHECKSUM_LENGTH;
  // CRC32 catches every error burst up to 32 bits, so any single substituted character in the
  // body is detected; a substituted checksum character changes the decoded value, which cannot
  // then equal the CRC (fixed-width base62 is one-to-one).
  return decodeBase62Number(candidate.slice(split)) === crc32(candidate.slice(0, split));
}

// Only this digest is stored; keys carry 256 bits of entropy, so a fast unsalted hash is enough
// (there is nothing for a slow KDF to protect against) and lookups stay a single indexed equality.
export function apiKeyDigest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

// RFC 7235 `credentials = auth-scheme 1*SP token68` with RFC 6750's b64token charset. Restricting the
// token charset is what rejects comma-separated lists and trailing junk. Several spaces after the
// scheme are accepted because the grammar says 1*SP; tabs there are not. Leading/trailing SP/HTAB are
// tolerated because they are optional whitespace around the field value (RFC 9110 §5.5), which
// Node's HTTP parser already strips, so the result does not depend on who called us.
const BEARER_CREDENTIALS = /^[ \t]*Bearer +([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;

export function parseBearerToken(header: string | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = BEARER_CREDENTIALS.exec(header);
  return match?.[1] ?? null;
}
