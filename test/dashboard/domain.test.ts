// The dashboard's domain rules without the app: the password hash format and its verification, the password policy,
// one-time tokens, email normalization, the tenancy rule and recent sign-in.
import { describe, expect, it } from 'vitest';
import { dummyPasswordHash, hashPassword, SCRYPT_PARAMS, verifyPassword } from '../../src/domain/password.js';
import { passwordProblem } from '../../src/domain/password-policy.js';
import { generateOneTimeToken, isWellFormedToken, oneTimeTokenDigest } from '../../src/domain/one-time-token.js';
import { canUseAgent, inScope, scopeOf } from '../../src/domain/tenancy.js';
import { isRecentSignIn, RECENT_SIGN_IN_MS } from '../../src/domain/recent-sign-in.js';
import { isPlausibleEmail, normalizeEmail } from '../../src/domain/user-email.js';

const CHEAP = { N: 2 ** 10, r: 8, p: 1 };

describe('password hashes', () => {
  it('are scrypt$N$r$p$salt$hash at N=2^17, r=8, p=1 by default, salted, and verify', async () => {
    expect(SCRYPT_PARAMS).toEqual({ N: 131072, r: 8, p: 1 });
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', hash)).toBe(false);
    expect(await hashPassword('correct horse battery staple', CHEAP)).not.toBe(
      await hashPassword('correct horse battery staple', CHEAP),
    );
  });

  it('verify with the parameters stored in the hash (the cost can be raised later)', async () => {
    const cheap = await hashPassword('a passphrase here', CHEAP);
    expect(cheap.startsWith('scrypt$1024$8$1$')).toBe(true);
    expect(await verifyPassword('a passphrase here', cheap)).toBe(true);
  });

  it('refuse what is not such a hash, and parameters out of bounds', async () => {
    for (const bad of [
      '',
      'plain',
      'scrypt$1024$8$1$c2FsdA==',
      'scrypt$1000$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==',
      'scrypt$4194304$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==',
    ]) {
      expect(await verifyPassword('x', bad), bad).toBe(false);
    }
  });

  it('the same for Unicode written two ways (NFC)', async () => {
    const hash = await hashPassword('caf\u00e9 au lait please', CHEAP);
    expect(await verifyPassword('cafe\u0301 au lait please', hash)).toBe(true);
  });

  it('have a dummy at the current cost for unknown emails', async () => {
    expect((await dummyPasswordHash()).startsWith('scrypt$131072$8$1$')).toBe(true);
    expect(await dummyPasswordHash()).toBe(await dummyPasswordHash());
  });
});

describe('password policy', () => {
  it('takes 8 to 128 characters (code points), with no composition rules', () => {
    expect(passwordProblem('1234567')).toMatch(/at least 8/);
    expect(passwordProblem('abcdefgh xyz')).toBeNull();
    expect(passwordProblem('🦊'.repeat(8))).toBeNull();
    expect(passwordProblem('🦊'.repeat(128))).toBeNull();
    expect(passwordProblem('a'.repeat(129))).toMatch(/at most 128/);
  });

  it('refuses the most common passwords, in any case, and the email itself', () => {
    for (const common of ['password', 'Password1', '12345678', 'iloveyou', 'qwertyuiop', 'TRUSTNO1'])
      expect(passwordProblem(common), common).toMatch(/most common/);
    expect(passwordProblem('ada.lovelace@example.com', { email: 'ada.lovelace@example.com' })).toMatch(/email/);
  });
});

describe('one-time tokens', () => {
  it('are 256 random bits in base64url, stored as SHA-256', () => {
    const { token, digest } = generateOneTimeToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(isWellFormedToken(token)).toBe(true);
    expect(digest.equals(oneTimeTokenDigest(token))).toBe(true);
    expect(generateOneTimeToken().token).not.toBe(token);
    expect(isWellFormedToken('../../etc')).toBe(false);
  });
});

describe('emails, tenancy, recent sign-in', () => {
  it('normalizes emails for a case-insensitive match', () => {
    expect(normalizeEmail('  Ada@Example.COM ')).toBe('ada@example.com');
    expect(isPlausibleEmail('ada@example.com')).toBe(true);
    expect(isPlausibleEmail('ada@localhost')).toBe(false);
    expect(isPlausibleEmail('no spaces@example.com')).toBe(false);
  });

  it('lets an agency user manage the agency and its clients, a client user only their client', () => {
    const agency = scopeOf({ accountId: 'A', accountKind: 'agency' });
    const client = scopeOf({ accountId: 'A1', accountKind: 'client' });
    expect(inScope(agency, { id: 'A', agencyId: null })).toBe(true);
    expect(inScope(agency, { id: 'A1', agencyId: 'A' })).toBe(true);
    expect(inScope(agency, { id: 'B', agencyId: null })).toBe(false);
    expect(inScope(agency, { id: 'B1', agencyId: 'B' })).toBe(false);
    expect(inScope(client, { id: 'A1', agencyId: 'A' })).toBe(true);
    expect(inScope(client, { id: 'A', agencyId: null })).toBe(false);
    expect(inScope(client, { id: 'A2', agencyId: 'A' })).toBe(false);
    // An API key's agents follow the same rule: its account's own, and an agency's clients'.
    expect(canUseAgent({ id: 'A', kind: 'agency' }, { accountId: 'A1', agencyId: 'A' })).toBe(true);
    expect(canUseAgent({ id: 'A1', kind: 'client' }, { accountId: 'A', agencyId: 'A' })).toBe(false);
    expect(canUseAgent({ id: 'A1', kind: 'client' }, { accountId: 'A2', agencyId: 'A' })).toBe(false);
    expect(canUseAgent({ id: 'B', kind: 'agency' }, { accountId: 'A1', agencyId: 'A' })).toBe(false);
  });

  it('counts a password typed within the last 10 minutes as a recent sign-in', () => {
    const now = new Date('2054-11-23T10:00:00Z');
    expect(isRecentSignIn(now.getTime() - RECENT_SIGN_IN_MS, now)).toBe(true);
    expect(isRecentSignIn(now.getTime() - RECENT_SIGN_IN_MS - 1, now)).toBe(false);
    expect(isRecentSignIn(undefined, now)).toBe(false);
  });
});
