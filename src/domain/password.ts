// Password hashing: scrypt (N=2^17, r=8, p=1) in a self-describing string, so the cost can be raised later and old
// hashes still verify. Asynchronous (libuv's thread pool): a hash never blocks the event loop.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/** OWASP's scrypt recommendation for N=2^17 (ASVS 5 level 2). */
export const SCRYPT_PARAMS: ScryptParams = { N: 2 ** 17, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;
const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

function derive(password: string, salt: Buffer, { N, r, p }: ScryptParams, length: number): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; Node refuses past maxmem (32 MiB by default), so it is raised to twice that.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$<salt base64>$<hash base64>`. */
export async function hashPassword(password: string, params: ScryptParams = SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params, KEY_BYTES);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Parameters a stored hash may carry: bounded, so a corrupt row cannot ask for gigabytes or hours. */
function parse(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const match = FORMAT.exec(stored);
  if (!match) return null;
  const [N, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (!(N >= 2 && N <= 2 ** 20 && (N & (N - 1)) === 0 && r >= 1 && r <= 32 && p >= 1 && p <= 16)) return null;
  const key = Buffer.from(match[5]!, 'base64');
  if (key.length < 16 || key.length > 64) return null;
  return { params: { N, r, p }, salt: Buffer.from(match[4]!, 'base64'), key };
}

/** True when `password` matches; false for a mismatch or a hash this code cannot read. Compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) return false;
  const candidate = await derive(password, parsed.salt, parsed.params, parsed.key.length);
  return timingSafeEqual(candidate, parsed.key);
}

let dummy: Promise<string> | undefined;

/**
 * A hash of a random password at the current cost, made once per process. Signing in with an unknown email (or a
 * user without a password yet) verifies against it, so the answer takes as long as for a wrong password.
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('base64'));
  return dummy;
}
