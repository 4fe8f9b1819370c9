// Dashboard people: creating users with a one-time link, signing in, setting and changing passwords, disabling, and
// ending sessions. callctl and the dashboard both call these, so each change is made (and audited) one way only.
import type { Config } from '../config.js';
import {
  generateOneTimeToken,
  ONE_TIME_TOKEN_TTL_MS,
  oneTimeTokenDigest,
  isWellFormedToken,
} from '../domain/one-time-token.js';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../domain/password.js';
import { passwordProblem } from '../domain/password-policy.js';
import { isPlausibleEmail, normalizeEmail } from '../domain/user-email.js';
import { isUniqueViolation, type Storage, type TokenPurpose } from '../storage/index.js';
import { accountAndAgency, audit, type Actor } from './audit.js';
import { AdminError } from './errors.js';
import { readableNameProblem } from '../../schemas/text.js';
import { notAnEmailAddress } from '../../schemas/user-email.js';
import { isUuid } from '../../schemas/uuid.js';

export const SET_PASSWORD_PATH = '/dashboard/set-password/';

/** Where people reach the dashboard: PUBLIC_BASE_URL when set, else this machine's listener. */
export function dashboardBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>): string {
  return (config.PUBLIC_BASE_URL ?? `https://localhost:${config.PORT}`).replace(/\/+$/, '');
}

export function setPasswordUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PORT'>, token: string): string {
  return `${dashboardBaseUrl(config)}${SET_PASSWORD_PATH}${token}`;
}

/**
 * Creates a user of `accountId` and a one-time link to set their password (24 h). The token is returned once and
 * only its digest is stored. An operator's link sets a password (audited as user_created); a user's is an invitation
 * (audited as user_invited). An email taken within the account's agency changes nothing; other agencies' users do not
 * count (emails are unique per agency), so the answer never says whether another tenant uses the address.
 */
export async function createUser(
  storage: Storage,
  input: { accountId: string; email: string; actor: Actor; now: Date },
): Promise<{ id: string; token: string; expiresAt: Date }> {
  const now = input.now;
  const email = normalizeEmail(input.email);
  if (!isPlausibleEmail(email)) throw new AdminError(notAnEmailAddress(input.email));
  const generated = generateOneTimeToken();
  const expiresAt = new Date(now.getTime() + ONE_TIME_TOKEN_TTL_MS);
  const purpose: TokenPurpose = input.actor.kind === 'user' ? 'invitation' : 'set_password';
  try {
    const id = await storage.transaction(async (tx) => {
      const { agencyId } = await accountAndAgency(tx, input.accountId);
      const { id } = await tx.users.insertUser({
        accountId: input.accountId,
        agencyId,
        email,
        createdAt: now,
      });
      const createdById = input.actor.kind === 'user' ? input.actor.userId : null;
      await tx.tokens.insertToken({
        userId: id,
        digest: generated.digest,
        purpose,
        createdById,
        createdAt: now,
        expiresAt,
      });
      await audit(
        tx,
        input.accountId,
        input.actor,
        input.actor.kind === 'user' ? 'user_invited' : 'user_created',
        now,
        { user_id: id, email },
      );
      return id;
    });
    return { id, token: generated.token, expiresAt };
  } catch (error) {
    if (isUniqueViolation(error)) throw new AdminError(`A user with the email ${email} already exists`);
    throw error;
  }
}

/**
 * A signed-in user invites someone to `accountId` (the caller has checked that they manage it): the new user gets a
 * one-time invitation link (24 h, single use, only its digest stored), returned here once.
 */
export async function inviteUser(
  storage: Storage,
  input: { accountId: string; email: string; invitedBy: { userId: string; ip: string | null }; now: Date },
): Promise<{ id: string; token: string; expiresAt: Date }> {
  return createUser(storage, {
    accountId: input.accountId,
    email: input.email,
    actor: { kind: 'user', ...input.invitedBy },
    now: input.now,
  });
}

export const CANNOT_DISABLE_SELF = 'You cannot disable yourself. Another agency user can, or an operator with callctl.';

/** Disables the user: they cannot sign in, their sessions end at once and their unused links stop working. */
export async function disableUser(storage: Storage, userId: string, actor: Actor, now: Date) {
  const user = isUuid(userId) ? await storage.users.findUserById(userId) : null;
  if (!user) throw new AdminError(`No user ${userId}`);
  if (actor.kind === 'user' && actor.userId === user.id) throw new AdminError(CANNOT_DISABLE_SELF);
  const ended = await storage.transaction(async (tx) => {
    const changed = await tx.users.markDisabled(user.id, now);
    const sessions = await tx.sessions.deleteUserSessions(user.id);
    await tx.tokens.expireUserTokens(user.id, now);
    if (changed)
      await audit(tx, user.accountId, actor, 'user_disabled', now, {
        user_id: user.id,
        email: user.email,
        sessions_ended: sessions,
      });
    return { changed, sessions };
  });
  return { id: user.id, disabled: true, already_disabled: !ended.changed, sessions_ended: ended.sessions };
}

/** Enables a disabled user again: they can sign in with their password; their old links stay void (send a new one). */
export async function enableUser(storage: Storage, userId: string, actor: Actor, now: Date) {
  const user = isUuid(userId) ? await storage.users.findUserById(userId) : null;
  if (!user) throw new AdminError(`No user ${userId}`);
  const changed = await storage.transaction(async (tx) => {
    const changed = await tx.users.markEnabled(user.id);
    if (changed) await audit(tx, user.accountId, actor, 'user_enabled', now, { user_id: user.id, email: user.email });
    return changed;
  });
  return { id: user.id, enabled: true, already_enabled: !changed };
}

export type SignInResult = { ok: true; userId: string; accountId: string } | { ok: false };

/**
 * Checks an email and password. An address may belong to users of several agencies: the password is checked against
 * each usable one (at once, so the time hardly depends on how many there are) and signs in to the one it opens (the
 * most recently signed-in when it opens several). Unknown emails, users without a password yet and disabled users
 * verify against a dummy hash, so every refusal takes the time of a wrong password and says the same thing. A failed
 * attempt is audited on each known user's account (with the IP); success records the sign-in time and is audited too.
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
  const user = usable.find((_user, i) => matches[i]);
  if (!user) {
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
  await storage.transaction(async (tx) => {
    await tx.users.recordSignIn(user.id, input.now);
    await audit(tx, user.accountId, { kind: 'user', userId: user.id, ip: input.ip }, 'sign_in', input.now);
  });
  return { ok: true, userId: user.id, accountId: user.accountId };
}

/** Whether `password` is the user's (re-entering it for a sensitive action). */
export async function checkPassword(storage: Storage, userId: string, password: string): Promise<boolean> {
  const user = await storage.users.findUserById(userId);
  const usable = user && !user.disabledAt && user.passwordHash !== null;
  const matches = await verifyPassword(password, usable ? user.passwordHash! : await dummyPasswordHash());
  return Boolean(usable && matches);
}

/** What the set-password page shows before the form is sent: whose link it is, or null (unknown, used, expired). */
export async function usableLink(storage: Storage, token: string, now: Date) {
  if (!isWellFormedToken(token)) return null;
  const found = await storage.tokens.findUsableToken(oneTimeTokenDigest(token), now);
  if (!found || found.user.disabledAt) return null;
  return { userId: found.userId, email: found.user.email, purpose: found.purpose };
}

export type SetPasswordResult = { ok: true; userId: string } | { ok: false; problem: string };

export const LINK_UNUSABLE =
  'This link has expired or was already used, or a newer link replaced it. Ask for a new one.';

/** Sets the password from a one-time link; the link is used up, and any session the user had ends. */
export async function setPasswordWithLink(
  storage: Storage,
  input: { token: string; password: string; ip: string | null; now: Date },
): Promise<SetPasswordResult> {
  const link = await usableLink(storage, input.token, input.now);
  if (!link) return { ok: false, problem: LINK_UNUSABLE };
  const problem = passwordProblem(input.password, { email: link.email });
  if (problem) return { ok: false, problem };
  // Hashed before the transaction: it takes most of a second, and no row needs to stay locked for it.
  const hash = await hashPassword(input.password);
  return storage.transaction(async (tx) => {
    const used = await tx.tokens.consumeToken(oneTimeTokenDigest(input.token), input.now);
    if (!used || used.userId !== link.userId) return { ok: false as const, problem: LINK_UNUSABLE };
    await tx.users.setPasswordHash(used.userId, hash);
    await tx.sessions.deleteUserSessions(used.userId);
    const user = await tx.users.findUserById(used.userId);
    await audit(tx, user!.accountId, { kind: 'user', userId: used.userId, ip: input.ip }, 'password_set', input.now, {
      link: used.purpose,
    });
    return { ok: true as const, userId: used.userId };
  });
}

/**
 * Changes a signed-in user's password (the current one is required). Every other session of the user ends; the
 * caller's own session (digest `keep`) is kept.
 */
export async function changePassword(
  storage: Storage,
  input: { userId: string; current: string; next: string; keep: Buffer; ip: string | null; now: Date },
): Promise<{ ok: true; sessionsEnded: number } | { ok: false; problem: string }> {
  const user = await storage.users.findUserById(input.userId);
  if (!user || user.disabledAt) return { ok: false, problem: 'Your account is disabled.' };
  if (!(await checkPassword(storage, input.userId, input.current)))
    return { ok: false, problem: 'The current password is not right.' };
  const problem = passwordProblem(input.next, { email: user.email });
  if (problem) return { ok: false, problem };
  const hash = await hashPassword(input.next);
  const sessionsEnded = await storage.transaction(async (tx) => {
    await tx.users.setPasswordHash(user.id, hash);
    const ended = await tx.sessions.deleteUserSessions(user.id, input.keep);
    await audit(tx, user.accountId, { kind: 'user', userId: user.id, ip: input.ip }, 'password_changed', input.now, {
      other_sessions_ended: ended,
    });
    return ended;
  });
  return { ok: true, sessionsEnded };
}

/** Ends every session of the user (sign out everywhere), the caller's included. */
export async function endAllSessions(
  storage: Storage,
  input: { userId: string; ip: string | null; now: Date },
): Promise<number> {
  return storage.transaction(async (tx) => {
    const user = await tx.users.findUserById(input.userId);
    if (!user) return 0;
    const ended = await tx.sessions.deleteUserSessions(user.id);
    await audit(tx, user.accountId, { kind: 'user', userId: user.id, ip: input.ip }, 'sessions_ended', input.now, {
      sessions_ended: ended,
    });
    return ended;
  });
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

/** A new agency on the agency plan and its first user, with the user's set-password link: the one-command start. */
export async function setupAgency(storage: Storage, input: { agencyName: string; email: string; now: Date }) {
  const name = input.agencyName.trim();
  if (!name) throw new AdminError('An agency needs a name');
  const problem = readableNameProblem(name);
  if (problem) throw new AdminError(`An agency's name ${problem}`);
  if (!isPlausibleEmail(input.email)) throw new AdminError(notAnEmailAddress(input.email));
  // No check of the email: it is unique per agency, and this agency is new (the same person may run two agencies).
  const agency = await storage.accounts.insertAgency({ name, plan: 'agency' });
  try {
    const user = await createUser(storage, {
      accountId: agency.id,
      email: input.email,
      actor: { kind: 'operator' },
      now: input.now,
    });
    return { agencyId: agency.id, ...user };
  } catch (error) {
    // Nothing half-made: the agency goes when its first user could not be created.
    await storage.accounts.deleteAccount(agency.id).catch(() => undefined);
    throw error;
  }
}
