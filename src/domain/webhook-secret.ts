// Webhook signing secrets in the Standard Webhooks format: "whsec_" + base64 of the raw HMAC key.
import { randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

const GENERATED_KEY_BYTES = 32;
// Standard Webhooks requires symmetric keys of at least 24 bytes (192 bits) and at most 64 bytes
// (512 bits); accepting that whole range lets customers bring secrets minted by other compliant tools.
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
// Buffer.from(x, 'base64') silently skips invalid characters and accepts base64url, so a
// mistyped secret would yield a different key instead of an error; the shape is checked first.
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(GENERATED_KEY_BYTES).toString('base64');
}

// The HMAC key is the decoded bytes, not the secret string: that is what Standard Webhooks
// verifiers (svix, standardwebhooks libraries) do, so signing with anything else would not verify.
export function webhookSigningKey(secret: string): Buffer {
  if (typeof secret !== 'string' || !secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new TypeError(`webhook secret must start with "${WEBHOOK_SECRET_PREFIX}"`);
  }
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  // Bounding the length before the regex keeps the work bounded for garbage input.
  if (encoded.length > Math.ceil(MAX_KEY_BYTES / 3) * 4 || !STANDARD_BASE64.test(encoded)) {
    throw new TypeError('webhook secret is not valid standard base64');
  }
  const key = Buffer.from(encoded, 'base64');
  // Non-canonical encodings (non-zero unused bits before padding) decode to the same key as another
  // string; rejecting them keeps one secret string per key.
  if (key.toString('base64') !== encoded) {
    throw new TypeError('webhook secret is not canonical base64');
  }
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new RangeError(`webhook signing key must be ${MIN_KEY_BYTES}-${MAX_KEY_BYTES} bytes, got ${key.length}`);
  }
  return key;
}
