// Signing in and out of the dashboard: the password check against every user with the email, the choice of account
// when the password opens several (one email, users in several accounts), and the audit entries of each step.
import { dummyPasswordHash, verifyPassword } from '../domain/password.js';
import { isPlausibleEmail, normalizeEmail } from '../domain/user-email.js';
import type { Storage } from '../storage/index.js';
import { audit } from './audit.js';

/** An account the typed password opens, for the sign-in's choice page. */
export interface SignInChoice {
  userId: string;
  accountId: string;
  accountName: string;
}

export type SignInResult =
  { ok: true; userId: string; accountId: string } | { ok: 'choose'; choices: SignInChoice[] } | { ok: false };

/**
 * Checks an email and password. An address may belong to users of several accounts: the password is checked against
 * each usable one (at once, so the time hardly depends on how many there are). When it opens one, that user signs in;
 * when it opens several, the caller asks which (`choose`, most recently signed-in first) and signs in with
 * completeChosenSignIn. Unknown emails, users without a password yet and disabled users verify against a dummy hash,
 * so every refusal takes the time of a wrong password and says the same thing. A failed attempt is audited on each
 * known user's account (with the IP); success records the sign-in time and is audited too.
 */
export async function authenticate(
  storage: Storage,
  input: { email: string; password: string; ip: string | null; now: Date },
): Promise<SignInResult> {
  const email = normalizeEmail(input.email);
  const users = isPlausibleEmail(email) ? await storage.users.findUsersByEmail(email) : [];
  const usable = users.filter((user) => !user.disabled && user.passwordHash !== null);
  const checks =
    usable.length > 0
      ? usable.map((user) => verifyPassword(input.password, user.passwordHash!))
      : [dummyPasswordHash().then((hash) => verifyPassword(input.password, hash))];
  const matches = await Promise.all(checks);
  const opened = usable.filter((_user, i) => matches[i]);
  if (opened.length === 0) {
    for (const known of users) {
      const reason = known.disabled
        ? { reason: 'disabled' }
        : known.passwordHash === null
          ? { reason: 'no password set' }
          : {};
      await audit(
        storage,
        known.accountId,
        { kind: 'user', userId: known.id, ip: input.ip },
        'sign_in_failed',
        input.now,
        reason,
      );
    }
    return { ok: false };
  }
  if (opened.length > 1)
    return {
      ok: 'choose',
      choices: opened.map((u) => ({ userId: u.id, accountId: u.accountId, accountName: u.accountName })),
    };
  const [user] = opened as [(typeof opened)[number]];
  await recordSignIn(storage, user, input.ip, input.now, {});
  return { ok: true, userId: user.id, accountId: user.accountId };
}

async function recordSignIn(
  storage: Storage,
  user: { id: string; accountId: string },
  ip: string | null,
  now: Date,
  detail: Record<string, unknown>,
): Promise<void> {
  await storage.transaction(async (tx) => {
    await tx.users.recordSignIn(user.id, now);
    await audit(tx, user.accountId, { kind: 'user', userId: user.id, ip }, 'sign_in', now, detail);
  });
}

/**
 * Signs in as the account chosen on the choice page: `userId` must be one of `offered` (what authenticate returned
 * for this session, which the caller kept) and still enabled. Audited as a sign-in, with how many accounts were
 * offered.
 */
export async function completeChosenSignIn(
  storage: Storage,
  input: { userId: string; offered: string[]; ip: string | null; now: Date },
): Promise<{ ok: true; userId: string; accountId: string } | { ok: false }> {
  if (!input.offered.includes(input.userId)) return { ok: false };
  const user = await storage.users.findUserById(input.userId);
  if (!user || user.disabledAt || user.passwordHash === null) return { ok: false };
  await recordSignIn(storage, user, input.ip, input.now, { chosen_among: input.offered.length });
  return { ok: true, userId: user.id, accountId: user.accountId };
}

/** Records a sign-out (the session itself is destroyed by the session plugin). */
export async function recordSignOut(
  storage: Storage,
  input: { userId: string; ip: string | null; now: Date },
): Promise<void> {
  const user = await storage.users.findUserById(input.userId);
  if (user)
    await audit(storage, user.accountId, { kind: 'user', userId: user.id, ip: input.ip }, 'sign_out', input.now);
}
