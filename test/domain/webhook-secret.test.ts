// Tests for Standard Webhooks secret generation and decoding into the HMAC key.
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_SECRET_PREFIX, generateWebhookSecret, webhookSigningKey } from '../../src/domain/webhook-secret.js';
import { WebhookSender } from '../../src/webhooks/sender.js';

describe('generateWebhookSecret', () => {
  it('is whsec_ followed by base64 of 32 bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret.startsWith(WEBHOOK_SECRET_PREFIX)).toBe(true);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
  });

  it('is distinct every time', () => {
    const secrets = new Set(Array.from({ length: 500 }, () => generateWebhookSecret()));
    expect(secrets.size).toBe(500);
  });

  it('round-trips through webhookSigningKey', () => {
    for (let i = 0; i < 200; i++) {
      const secret = generateWebhookSecret();
      const key = webhookSigningKey(secret);
      expect(key).toHaveLength(32);
      expect(WEBHOOK_SECRET_PREFIX + key.toString('base64')).toBe(secret);
    }
  });
});

describe('webhookSigningKey', () => {
  it('decodes the part after whsec_ (not the whole string) as the HMAC key', () => {
    // Secret and expected signature from the Standard Webhooks reference test suite.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const key = webhookSigningKey(secret);
    expect(key.equals(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'))).toBe(true);
    const signed = 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}';
    expect(createHmac('sha256', key).update(signed).digest('base64')).toBe(
      'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('accepts keys from 24 to 64 bytes', () => {
    for (const size of [24, 25, 26, 32, 48, 64]) {
      const raw = Buffer.alloc(size, 7);
      expect(webhookSigningKey(WEBHOOK_SECRET_PREFIX + raw.toString('base64')).equals(raw)).toBe(true);
    }
  });

  it.each([
    ['no prefix', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['wrong prefix', 'whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['uppercase prefix', 'WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['prefix only', 'whsec_'],
    ['empty', ''],
    ['invalid character', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa!w'],
    ['base64url alphabet', `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`],
    ['missing padding', `whsec_${Buffer.alloc(32, 1).toString('base64').replace(/=+$/, '')}`],
    ['whitespace inside', 'whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw'],
    ['trailing newline', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n'],
    ['non-canonical trailing bits', `whsec_${Buffer.alloc(32, 0).toString('base64').slice(0, -2)}B=`],
    ['too short (16 bytes)', `whsec_${Buffer.alloc(16, 1).toString('base64')}`],
    ['too long (65 bytes)', `whsec_${Buffer.alloc(65, 1).toString('base64')}`],
    ['huge', `whsec_${'A'.repeat(1_000_000)}`],
  ])('throws on %s', (_name, secret) => {
    expect(() => webhookSigningKey(secret)).toThrow();
  });

  it('throws on a non-string', () => {
    expect(() => webhookSigningKey(undefined as unknown as string)).toThrow(TypeError);
  });
});

describe('WebhookSender.sign', () => {
  it("gives the reference library's signature for any id, time and body", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        fc.string({ unit: 'binary' }),
        (id, seconds, body) => {
          const secret = generateWebhookSecret();
          const at = new Date(seconds * 1000 + 999);
          expect(WebhookSender.sign(secret, id, at, body)).toBe(new Webhook(secret).sign(id, at, body));
        },
      ),
      { numRuns: 300 },
    );
  });
});
