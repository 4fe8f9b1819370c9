// scrub(): whatever surrounds a key, a webhook secret, a credentialed URL or a key in a query string, it is gone.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scrub } from '../../src/logger.js';

const KEY = 'svc_sk_4Qm9ZtR2xVb7LcN1pK8sW3dF6gH0jY5uE2aB9cD1fG3h';
const SECRET = 'whsec_MfKQ9r8GKYqrTcHEPe4Yf4m2GJbN5mUjV0nZxZ4Dp1s=';

describe('scrub', () => {
  it('removes each kind of secret wherever it sits in the text', () => {
    const secrets = [
      { text: KEY, gone: KEY.slice(7) },
      { text: SECRET, gone: SECRET.slice(6) },
      { text: 'postgresql://app:hunter2@db.internal:5432/app', gone: 'hunter2' },
      { text: 'redis://:hunter2@cache:6379', gone: 'hunter2' },
      { text: '/x?API_KEY=abc123secret&y=1', gone: 'abc123secret' },
      { text: '/x?a=1&token=abc123secret', gone: 'abc123secret' },
    ];
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...secrets), fc.string(), (before, secret, after) => {
        expect(scrub(`${before} ${secret.text} ${after}`)).not.toContain(secret.gone);
      }),
      { numRuns: 500 },
    );
  });

  it('returns text without any of them unchanged', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        fc.pre(!/svc_sk_|whsec_|:\/\/|[?&]/i.test(text));
        expect(scrub(text)).toBe(text);
      }),
      { numRuns: 500 },
    );
    expect(scrub('request completed')).toBe('request completed');
  });
});
