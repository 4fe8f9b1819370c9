// One-time link tokens (set a password, accept an invitation): 256 random bits, base64url, stored only as SHA-256.
import { createHash, randomBytes } from 'node:crypto';

/** How long a link works. */
export const ONE_TIME_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface GeneratedToken {
  token: string;
  digest: Buffer;
}

export function generateOneTimeToken(): GeneratedToken {
  const token = randomBytes(32).toString('base64url');
  return { token, digest: oneTimeTokenDigest(token) };
}

/** A random token has full entropy: a plain SHA-256 is enough to keep the stored form useless to a reader. */
export function oneTimeTokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Refuses what cannot be a token before any lookup. */
export function isWellFormedToken(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}
