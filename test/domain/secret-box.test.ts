// The secrets box: envelope encryption bound to a value's place, key ids, rotation by re-wrapping, clear refusals of a
// tampered value, a wrong key or an unknown id; and what sealing and opening cost (printed, never asserted).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decodeSecretsKey,
  decodeSecretsKeyList,
  isSealed,
  SecretBox,
  SecretOpenError,
  sealedKeyId,
  secretsKeyId,
} from '../../src/domain/secret-box.js';
import { SEALED_PREFIX, SecretVault } from '../../src/storage/secrets.js';

const key = () => randomBytes(32);
const PLACE = 'webhook_endpoints.secret:0b9e7a4c-5d1f-4e44-9f5e-3c1f0a2b4d6e';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** The sealed value with one base64url character of field `field` (2: data key, 3: value) changed. */
function flip(sealed: string, field: 2 | 3): string {
  const parts = sealed.split('.');
  const text = parts[field + 1]!;
  const at = Math.floor(text.length / 2);
  parts[field + 1] = text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
  return parts.join('.');
}

describe('SecretBox', () => {
  it('opens what it sealed, for the same place; the stored text holds neither the value nor the key', () => {
    const kek = key();
    const box = new SecretBox(kek);
    const sealed = box.seal(SECRET, PLACE);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed.startsWith(SEALED_PREFIX)).toBe(true);
    expect(sealed).not.toContain(SECRET);
    expect(sealed).not.toContain(SECRET.slice(6));
    expect(sealed).not.toContain(kek.toString('base64'));
    expect(sealedKeyId(sealed)).toBe(box.currentKeyId);
    expect(box.open(sealed, PLACE)).toBe(SECRET);
    // A fresh data key and IVs every time: two seals of one value differ.
    expect(box.seal(SECRET, PLACE)).not.toBe(sealed);
  });

  it('a key id is derived from the key: 16 hex, the same for the same key, another for another', () => {
    const kek = key();
    expect(secretsKeyId(kek)).toMatch(/^[0-9a-f]{16}$/);
    expect(secretsKeyId(Buffer.from(kek))).toBe(secretsKeyId(kek));
    expect(secretsKeyId(key())).not.toBe(secretsKeyId(kek));
    expect(new SecretBox(kek).currentKeyId).toBe(secretsKeyId(kek));
  });

  it('a value copied to another place does not open there (nor from the cache of its own place)', () => {
    const box = new SecretBox(key());
    const sealed = box.seal(SECRET, PLACE);
    expect(box.open(sealed, PLACE)).toBe(SECRET);
    expect(() => box.open(sealed, 'webhook_endpoints.secret:another-account')).toThrow(SecretOpenError);
    expect(() => box.open(sealed, 'webhook_endpoints.secret:another-account')).toThrow(/changed, or it belongs/);
  });

  it('a changed data key or value does not open, with a message that says so and never the value', () => {
    const box = new SecretBox(key());
    const sealed = box.seal(SECRET, PLACE);
    for (const tampered of [flip(sealed, 2), flip(sealed, 3)]) {
      expect(() => box.open(tampered, PLACE)).toThrow(SecretOpenError);
      try {
        box.open(tampered, PLACE);
      } catch (error) {
        expect((error as Error).message).toMatch(/changed/);
        expect((error as Error).message).not.toContain(SECRET);
      }
    }
    expect(() => box.open(`${sealed}.extra`, PLACE)).toThrow(/malformed/);
    expect(() => box.open('sealed.v1.nothex', PLACE)).toThrow(/malformed/);
    expect(() => box.open(SECRET, PLACE)).toThrow(/not sealed/);
  });

  it('a value sealed with a key the box lacks names its key id and SECRETS_KEY', () => {
    const other = new SecretBox(key());
    const sealed = other.seal(SECRET, PLACE);
    const box = new SecretBox(key());
    expect(() => box.open(sealed, PLACE)).toThrow(
      new RegExp(`key id ${other.currentKeyId}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS holds`),
    );
  });

  it('a wrong key under the right id (a forged id) does not open', () => {
    const sealed = new SecretBox(key()).seal(SECRET, PLACE);
    const forger = new SecretBox(key());
    const forged = sealed.replace(/^sealed\.v1\.[0-9a-f]{16}\./, `sealed.v1.${forger.currentKeyId}.`);
    expect(() => forger.open(forged, PLACE)).toThrow(/does not open with key/);
  });

  it('previous keys open; only the current one seals; a rotation re-wraps the data key and keeps the ciphertext', () => {
    const [oldKey, newKey] = [key(), key()];
    const before = new SecretBox(oldKey);
    const sealed = before.seal(SECRET, PLACE);
    const after = new SecretBox(newKey, [oldKey]);
    expect(after.keyIds).toEqual([secretsKeyId(newKey), secretsKeyId(oldKey)]);
    expect(after.open(sealed, PLACE)).toBe(SECRET);
    expect(sealedKeyId(after.seal(SECRET, PLACE))).toBe(secretsKeyId(newKey));
    const rewrapped = after.rewrap(sealed, PLACE)!;
    expect(sealedKeyId(rewrapped)).toBe(secretsKeyId(newKey));
    expect(rewrapped.split('.').at(-1)).toBe(sealed.split('.').at(-1));
    expect(after.rewrap(rewrapped, PLACE)).toBeNull();
    // Once the old key is dropped, the re-wrapped value still opens, the old one does not.
    const only = new SecretBox(newKey);
    expect(only.open(rewrapped, PLACE)).toBe(SECRET);
    expect(() => only.open(sealed, PLACE)).toThrow(/neither SECRETS_KEY/);
    // A re-wrap of a value that does not open is refused, not hidden.
    expect(() => after.rewrap(flip(sealed, 3), PLACE)).toThrow(SecretOpenError);
  });

  it('a replica with the old key current and the new one readable opens what one with the new key current sealed', () => {
    const [oldKey, newKey] = [key(), key()];
    const ahead = new SecretBox(newKey, [oldKey]);
    const behind = new SecretBox(oldKey, [newKey]);
    expect(behind.open(ahead.seal(SECRET, PLACE), PLACE)).toBe(SECRET);
    expect(ahead.open(behind.seal(SECRET, PLACE), PLACE)).toBe(SECRET);
  });

  it('refuses a key that is not 32 bytes', () => {
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
    expect(() => new SecretBox(key(), [randomBytes(31)])).toThrow(/32 bytes/);
  });

  it('seals any text (JSON credentials, non-ASCII) and an empty one', () => {
    const box = new SecretBox(key());
    for (const value of ['', '{"account_sid":"AC00","auth_token":"t"}', 'clé ✓ 🔑']) {
      expect(box.open(box.seal(value, 'carrier_accounts.credentials:x'), 'carrier_accounts.credentials:x')).toBe(value);
    }
  });

  it('costs (printed for docs/operations.md#secrets): seal, a first open (unwrap), a cached open', () => {
    const box = new SecretBox(key());
    const n = 2000;
    const sealedValues: string[] = [];
    let started = performance.now();
    for (let i = 0; i < n; i++) sealedValues.push(box.seal(SECRET, `${PLACE}${i}`));
    const sealUs = ((performance.now() - started) * 1000) / n;
    started = performance.now();
    for (let i = 0; i < n; i++) box.open(sealedValues[i]!, `${PLACE}${i}`);
    const openUs = ((performance.now() - started) * 1000) / n;
    started = performance.now();
    for (let round = 0; round < 10; round++) for (let i = 0; i < n; i++) box.open(sealedValues[i]!, `${PLACE}${i}`);
    const cachedUs = ((performance.now() - started) * 1000) / (10 * n);
    console.log(
      `secret box: seal ${sealUs.toFixed(1)} µs, first open ${openUs.toFixed(1)} µs, cached open ${cachedUs.toFixed(2)} µs`,
    );
    expect(cachedUs).toBeGreaterThan(0);
  });
});

describe('configured keys', () => {
  it('SECRETS_KEY is standard base64 of exactly 32 bytes', () => {
    const text = key().toString('base64');
    expect(decodeSecretsKey(text)).toHaveLength(32);
    expect(decodeSecretsKey(` ${text}\n`)).toHaveLength(32);
    expect(decodeSecretsKey(randomBytes(16).toString('base64'))).toBeNull();
    expect(decodeSecretsKey(randomBytes(33).toString('base64'))).toBeNull();
    expect(decodeSecretsKey(key().toString('base64url'))).toBeNull();
    expect(decodeSecretsKey('not a key')).toBeNull();
  });

  it('SECRETS_KEY_PREVIOUS is keys separated by commas', () => {
    const [a, b] = [key().toString('base64'), key().toString('base64')];
    expect(decodeSecretsKeyList(`${a}, ${b},`)).toHaveLength(2);
    expect(decodeSecretsKeyList(`${a},nope`)).toBeNull();
  });
});

describe("the storage's vault", () => {
  it('opens values stored in clear as they are, seals nothing and opens nothing sealed until given a box', () => {
    const vault = new SecretVault();
    expect(vault.open(SECRET, PLACE)).toBe(SECRET);
    expect(() => vault.seal(SECRET, PLACE)).toThrow(/No secrets key is loaded/);
    const box = new SecretBox(key());
    expect(() => vault.open(box.seal(SECRET, PLACE), PLACE)).toThrow(/No secrets key is loaded/);
    let loads = 0;
    vault.use(() => (loads++, box));
    expect(vault.open(vault.seal(SECRET, PLACE), PLACE)).toBe(SECRET);
    expect(loads).toBe(1);
  });
});
