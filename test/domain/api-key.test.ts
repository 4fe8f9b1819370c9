// Tests for the API key format, its checksum, storage digest and Bearer header parsing.
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  API_KEY_PREFIX,
  apiKeyDigest,
  generateApiKey,
  isWellFormedApiKey,
  parseBearerToken,
} from '../../src/domain/api-key.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_LENGTH = API_KEY_PREFIX.length + 43 + 6;

function replaceAt(text: string, index: number, ch: string): string {
  return text.slice(0, index) + ch + text.slice(index + 1);
}

// Builds a key with a correct checksum around an arbitrary body, to test the alphabet/length rules
// independently of the checksum rule.
function withValidChecksum(prefixAndBody: string): string {
  let value = crc32(prefixAndBody);
  let out = '';
  while (value > 0) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return prefixAndBody + out.padStart(6, '0');
}

describe('generateApiKey', () => {
  it('produces 1,000 distinct, well-formed keys of the documented shape', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const { key, digest, displayPrefix } = generateApiKey();
      expect(key).toMatch(/^svc_sk_[0-9A-Za-z]{49}$/);
      expect(key).toHaveLength(KEY_LENGTH);
      expect(isWellFormedApiKey(key)).toBe(true);
      expect(digest.equals(apiKeyDigest(key))).toBe(true);
      expect(displayPrefix).toBe(key.slice(0, 12));
      expect(displayPrefix.startsWith(API_KEY_PREFIX)).toBe(true);
      keys.add(key);
    }
    expect(keys.size).toBe(1000);
  });

  it('uses the whole base62 alphabet in the body (no hex-only or lowercase-only encoding)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      for (const ch of generateApiKey().key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 43)) seen.add(ch);
    }
    expect(seen.size).toBe(62);
  });

  it('body decodes to a 256-bit value (32 random bytes)', () => {
    for (let i = 0; i < 50; i++) {
      const body = generateApiKey().key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 43);
      let value = 0n;
      for (const ch of body) value = value * 62n + BigInt(BASE62.indexOf(ch));
      expect(value < 1n << 256n).toBe(true);
    }
  });
});

describe('isWellFormedApiKey', () => {
  it('rejects every single-character substitution in body and checksum, at every position', () => {
    for (let k = 0; k < 5; k++) {
      const { key } = generateApiKey();
      for (let i = API_KEY_PREFIX.length; i < key.length; i++) {
        for (const ch of BASE62) {
          if (ch === key[i]) continue;
          expect(isWellFormedApiKey(replaceAt(key, i, ch)), `position ${i} -> ${ch}`).toBe(false);
        }
      }
    }
  });

  it('rejects adjacent transpositions', () => {
    const { key } = generateApiKey();
    for (let i = API_KEY_PREFIX.length; i < key.length - 1; i++) {
      const a = key[i] as string;
      const b = key[i + 1] as string;
      if (a === b) continue;
      expect(isWellFormedApiKey(key.slice(0, i) + b + a + key.slice(i + 2))).toBe(false);
    }
  });

  it('rejects a wrong prefix even when the checksum is computed over it', () => {
    const { key } = generateApiKey();
    const rest = key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 43);
    for (const prefix of ['svc_pk_', 'SVC_SK_', 'svc-sk_', 'sk_svc_', 'xxx_sk_']) {
      expect(isWellFormedApiKey(withValidChecksum(prefix + rest))).toBe(false);
    }
    expect(isWellFormedApiKey(key.slice(API_KEY_PREFIX.length))).toBe(false);
  });

  it('rejects wrong lengths even when the checksum is computed over them', () => {
    const { key } = generateApiKey();
    const prefixAndBody = key.slice(0, API_KEY_PREFIX.length + 43);
    expect(isWellFormedApiKey(withValidChecksum(prefixAndBody.slice(0, -1)))).toBe(false);
    expect(isWellFormedApiKey(withValidChecksum(`${prefixAndBody}A`))).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(`${key}0`)).toBe(false);
    expect(isWellFormedApiKey(`${key}\n`)).toBe(false);
    expect(isWellFormedApiKey(` ${key}`)).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
    expect(isWellFormedApiKey(API_KEY_PREFIX)).toBe(false);
    expect(isWellFormedApiKey(key.repeat(20_000))).toBe(false);
  });

  it('rejects characters outside base62 even when the checksum is computed over them', () => {
    const { key } = generateApiKey();
    const prefixAndBody = key.slice(0, API_KEY_PREFIX.length + 43);
    for (const ch of ['-', '_', '+', '/', '=', ' ', '.', 'é', '\u0000']) {
      expect(isWellFormedApiKey(withValidChecksum(replaceAt(prefixAndBody, 20, ch))), JSON.stringify(ch)).toBe(false);
    }
    // A non-base62 character in the checksum slot must not be decoded as some value that happens to match.
    expect(isWellFormedApiKey(replaceAt(key, key.length - 1, '-'))).toBe(false);
  });

  it('never throws on odd input', () => {
    for (const candidate of [undefined, null, 42, {}, [], Symbol('x')]) {
      expect(() => isWellFormedApiKey(candidate as string)).not.toThrow();
      expect(isWellFormedApiKey(candidate as string)).toBe(false);
    }
    // A lone surrogate of the right length must not make any encoder throw.
    expect(isWellFormedApiKey(API_KEY_PREFIX + '\ud800'.repeat(49))).toBe(false);
  });
});

describe('apiKeyDigest', () => {
  it('is the 32-byte SHA-256 of the UTF-8 key, stable across calls', () => {
    const { key, digest } = generateApiKey();
    expect(digest).toBeInstanceOf(Buffer);
    expect(digest).toHaveLength(32);
    expect(apiKeyDigest(key).equals(digest)).toBe(true);
    expect(apiKeyDigest(key).equals(createHash('sha256').update(Buffer.from(key, 'utf8')).digest())).toBe(true);
  });

  it('matches a known vector', () => {
    expect(apiKeyDigest('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('differs for different keys', () => {
    expect(apiKeyDigest(generateApiKey().key).equals(apiKeyDigest(generateApiKey().key))).toBe(false);
  });
});

describe('parseBearerToken', () => {
  const token = 'svc_sk_abc123';

  it.each<[string, string | undefined, string | null]>([
    ['missing header', undefined, null],
    ['empty header', '', null],
    ['plain token', `Bearer ${token}`, token],
    ['lowercase scheme (schemes are case-insensitive, RFC 7235)', `bearer ${token}`, token],
    ['uppercase scheme', `BEARER ${token}`, token],
    ['mixed-case scheme', `bEaReR ${token}`, token],
    ['several spaces after the scheme (RFC 7235: 1*SP)', `Bearer   ${token}`, token],
    ['two spaces after the scheme', 'Bearer  x', 'x'],
    ['tab after the scheme (grammar allows SP only)', `Bearer\t${token}`, null],
    ['trailing spaces (OWS around the field value)', `Bearer ${token}   `, token],
    ['leading spaces (OWS around the field value)', `  Bearer ${token}`, token],
    ['trailing tab', `Bearer ${token}\t`, token],
    ['b64token characters and padding', 'Bearer aZ09-._~+/==', 'aZ09-._~+/=='],
    ['other scheme', 'Basic x', null],
    ['Basic with credentials', 'Basic dXNlcjpwYXNz', null],
    ['scheme only', 'Bearer', null],
    ['scheme and a space only', 'Bearer ', null],
    ['no space between scheme and token', `Bearer${token}`, null],
    ['scheme with a prefix', `XBearer ${token}`, null],
    ['comma-separated credentials', `Bearer ${token}, Basic x`, null],
    ['comma inside the token', 'Bearer a,b', null],
    ['two tokens', 'Bearer a b', null],
    ['trailing junk after the token', `Bearer ${token} extra`, null],
    ['padding in the middle', 'Bearer ab=c', null],
    ['auth-param syntax', 'Bearer realm="x"', null],
    ['newline inside', `Bearer ${token}\nX: y`, null],
    ['trailing newline', `Bearer ${token}\n`, null],
    ['non-ASCII token', 'Bearer tökén', null],
  ])('%s', (_name, header, expected) => {
    expect(parseBearerToken(header)).toBe(expected);
  });

  it('round-trips a generated key', () => {
    const { key } = generateApiKey();
    expect(parseBearerToken(`Bearer ${key}`)).toBe(key);
  });

  it('stays fast on a long pathological header', () => {
    const header = `Bearer ${'a'.repeat(100_000)} !`;
    const started = performance.now();
    expect(parseBearerToken(header)).toBeNull();
    // Linear work is well under a millisecond; a backtracking pattern would take minutes on this input.
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
