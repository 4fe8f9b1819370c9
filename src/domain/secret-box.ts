// Secrets at rest (docs/operations.md#secrets): envelope encryption with AES-256-GCM. Each value gets a random data
// key that encrypts it; the data key is wrapped by the key-encryption key (SECRETS_KEY), whose id is kept with the
// value so that a rotation can tell what to re-wrap and a replica which of its keys opens it:
//
//   sealed.v1.<key id: 16 hex>.<base64url: wrap IV (12) | wrapped data key (32) | wrap tag (16)>.<base64url: IV (12) |
//   ciphertext | tag (16)>
//
// Both encryptions take the value's place (its table, column and row: `webhook_endpoints.secret:<account id>`) as
// additional data, so a value copied to another row does not open. The value's own encryption does not take the key id:
// a rotation re-wraps the data key and leaves the ciphertext as it is.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const PREFIX = 'sealed.v1.';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const WRAPPED_BYTES = IV_BYTES + KEY_BYTES + TAG_BYTES;
const KEY_ID = /^[0-9a-f]{16}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Opened values kept (by sealed text and place): the webhook worker and the trigger path open the same few often. */
const OPENED_KEPT = 10_000;

/** A sealed value that cannot be opened: its reason is in the message, never the value. */
export class SecretOpenError extends Error {
  override name = 'SecretOpenError';
}

/** The id of a key-encryption key: derived from the key itself, never configured by hand. */
export function secretsKeyId(key: Buffer): string {
  return createHash('sha256').update('outbound-call-trigger secrets key id\0').update(key).digest('hex').slice(0, 16);
}

/** Whether a stored value is sealed (a value stored in clear by an earlier release is not). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The id of the key a sealed value's data key is wrapped with; null for a value stored in clear. */
export function sealedKeyId(stored: string): string | null {
  if (!isSealed(stored)) return null;
  const id = stored.slice(PREFIX.length, PREFIX.length + 16);
  return KEY_ID.test(id) ? id : null;
}

function encrypt(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

function decrypt(key: Buffer, sealed: Buffer, aad: string): Buffer | null {
  if (sealed.length < IV_BYTES + TAG_BYTES) return null;
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return null;
  }
}

const wrapAad = (keyId: string, place: string) => `${PREFIX}${keyId}:${place}`;
const valueAad = (place: string) => `${PREFIX}${place}`;

interface Parts {
  keyId: string;
  wrapped: Buffer;
  body: Buffer;
}

function parse(stored: string): Parts {
  const fields = stored.slice(PREFIX.length).split('.');
  const [keyId, wrapped, body] = fields;
  if (
    fields.length !== 3 ||
    !KEY_ID.test(keyId!) ||
    !BASE64URL.test(wrapped!) ||
    !BASE64URL.test(body!) ||
    Buffer.from(wrapped!, 'base64url').length !== WRAPPED_BYTES
  )
    throw new SecretOpenError('the sealed value is malformed (not sealed.v1.<key id>.<data key>.<value>)');
  return { keyId: keyId!, wrapped: Buffer.from(wrapped!, 'base64url'), body: Buffer.from(body!, 'base64url') };
}

/**
 * The key-encryption keys of this process: the current one (seals, and re-wraps in a rotation) and the previous ones
 * (open only). Opened values are kept in a bounded map, so that a value read again costs no unwrap.
 */
export class SecretBox {
  readonly currentKeyId: string;
  private readonly keys = new Map<string, Buffer>();
  private readonly opened = new Map<string, string>();

  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    for (const key of [current, ...previous]) {
      if (key.length !== KEY_BYTES) throw new RangeError(`a secrets key must be ${KEY_BYTES} bytes, got ${key.length}`);
      if (!this.keys.has(secretsKeyId(key))) this.keys.set(secretsKeyId(key), Buffer.from(key));
    }
    this.currentKeyId = secretsKeyId(current);
  }

  /** The ids of every key this box opens with, the current one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** Whether one of this box's keys opens values wrapped under `keyId`. */
  hasKey(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /** `plaintext` sealed for `place` under the current key: a new data key each time. */
  seal(plaintext: string, place: string): string {
    const dataKey = randomBytes(KEY_BYTES);
    const body = encrypt(dataKey, Buffer.from(plaintext, 'utf8'), valueAad(place));
    const wrapped = encrypt(this.keys.get(this.currentKeyId)!, dataKey, wrapAad(this.currentKeyId, place));
    return `${PREFIX}${this.currentKeyId}.${wrapped.toString('base64url')}.${body.toString('base64url')}`;
  }

  /** The value sealed for `place`; throws SecretOpenError when no key of this box opens it or it was changed. */
  open(sealed: string, place: string): string {
    const cacheKey = `${place}\n${sealed}`;
    const kept = this.opened.get(cacheKey);
    if (kept !== undefined) return kept;
    if (!isSealed(sealed)) throw new SecretOpenError('the value is not sealed');
    const { keyId, wrapped, body } = parse(sealed);
    const dataKey = this.unwrap(keyId, wrapped, place);
    const plaintext = decrypt(dataKey, body, valueAad(place));
    if (!plaintext) throw new SecretOpenError(`the sealed value of ${place} does not open: it was changed`);
    const value = plaintext.toString('utf8');
    if (this.opened.size >= OPENED_KEPT) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(cacheKey, value);
    return value;
  }

  /**
   * The value re-wrapped under the current key (its ciphertext unchanged), or null when it already is. Only the data
   * key is decrypted and encrypted again: a rotation never sees the values themselves.
   */
  rewrap(sealed: string, place: string): string | null {
    const { keyId, wrapped, body } = parse(sealed);
    if (keyId === this.currentKeyId) return null;
    const dataKey = this.unwrap(keyId, wrapped, place);
    // The value must open too: a re-wrapped value that does not is damage a rotation must not hide.
    if (!decrypt(dataKey, body, valueAad(place)))
      throw new SecretOpenError(`the sealed value of ${place} does not open: it was changed`);
    const rewrapped = encrypt(this.keys.get(this.currentKeyId)!, dataKey, wrapAad(this.currentKeyId, place));
    return `${PREFIX}${this.currentKeyId}.${rewrapped.toString('base64url')}.${body.toString('base64url')}`;
  }

  private unwrap(keyId: string, wrapped: Buffer, place: string): Buffer {
    const key = this.keys.get(keyId);
    if (!key)
      throw new SecretOpenError(
        `the value of ${place} is sealed with key id ${keyId}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS holds`,
      );
    const dataKey = decrypt(key, wrapped, wrapAad(keyId, place));
    if (!dataKey || dataKey.length !== KEY_BYTES)
      throw new SecretOpenError(
        `the sealed value of ${place} does not open with key ${keyId}: it was changed, or it belongs to another place`,
      );
    return dataKey;
  }
}

/** A configured key: standard base64 of exactly 32 bytes (`openssl rand -base64 32`); null for anything else. */
export function decodeSecretsKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed, 'base64');
  return key.length === KEY_BYTES && key.toString('base64') === trimmed ? key : null;
}

/** SECRETS_KEY_PREVIOUS: keys separated by commas (blanks ignored); null when one of them is not a key. */
export function decodeSecretsKeyList(text: string): Buffer[] | null {
  const keys = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map(decodeSecretsKey);
  return keys.every((key): key is Buffer => key !== null) ? keys : null;
}
