// Dashboard people: creating users with a one-time link, setting and changing passwords, disabling, and
// ending sessions. callctl and the dashboard both call these, so each change is made (and audited) one way only. What
// one person does to another's account is held to the actor's reach; a user's own password and sessions are theirs.
import type { Config } from '../config.js';
import {
  generateOneTimeToken,
  ONE_TIME_TOKEN_TTL_MS,
  oneTimeTokenDigest,
  isWellFormedToken,
} from '../domain/one-time-token.js';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../domain/password.js';
import { passwordProblem } from '../domain/password-policy.js';
import type { Role } from '../domain/roles.js';
import type { LinkLimitRefusal } from '../domain/people-limits.js';
import { isPlausibleEmail, normalizeEmail } from '../domain/user-email.js';
import { isUniqueViolation, type Storage, type TokenPurpose } from '../storage/index.js';
import { accountAndAgency, audit, type Actor } from './audit.js';
import { AdminError } from './errors.js';
import { findAccount, findUser } from './reach.js';
import { linkLimitCheck, refuseOverLimit } from './user-links.js';
import { keepLastOwner } from './user-roles.js';
import { readableNameProblem } from '../../schemas/text.js';
import { notAnEmailAddress } from '../../schemas/user-email.js';

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
 * (audited as user_invited). An email taken within the account's agency changes nothing. An email used in another
 * agency: the operator is refused unless `allowExistingEmail` (then signing in asks which account); a dashboard user's
 * invitation is made, so that the answer never says whether another tenant uses the address. A dashboard user over a
 * limit of src/domain/people-limits.ts is refused (LinkLimitError, audited); one outside whose scope `accountId` lies
 * is told there is no such account. `role`: what the user may do in the account (default owner: an operator making an
 account's first user).
 */
export async function createUser(
  storage: Storage,
  input: { accountId: string; email: string; actor: Actor; now: Date; allowExistingEmail?: boolean; role?: Role },
): Promise<{ id: string; token: string; expiresAt: Date }> {
  const now = input.now;
  const email = normalizeEmail(input.email);
  if (!isPlausibleEmail(email)) throw new AdminError(notAnEmailAddress(input.email));
  if (input.actor.kind !== 'user' && !input.allowExistingEmail) await refuseExistingEmail(storage, email);
  await findAccount(storage, input.accountId, input.actor);
  const generated = generateOneTimeToken();
  const expiresAt = new Date(now.getTime() + ONE_TIME_TOKEN_TTL_MS);
  const purpose: TokenPurpose = input.actor.kind === 'user' ? 'invitation' : 'set_password';
  const role = input.role ?? 'owner';
  try {
    const made = await storage.transaction(async (tx): Promise<{ refused: LinkLimitRefusal } | { id: string }> => {
      const refusal = await linkLimitCheck(tx, input.accountId, input.actor, now);
      if (refusal) return { refused: refusal };
      const { agencyId } = await accountAndAgency(tx, input.accountId);
      const { id } = await tx.users.insertUser({
        accountId: input.accountId,
        agencyId,
        email,
        role,
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
        { user_id: id, email, role },
      );
      return { id };
    });
    if ('refused' in made)
      return await refuseOverLimit(
        storage,
        { accountId: input.accountId, actor: input.actor, what: 'invitation', email, now },
        made.refused,
      );
    return { id: made.id, token: generated.token, expiresAt };
  } catch (error) {
    if (isUniqueViolation(error)) throw new AdminError(`A user with the email ${email} already exists`);
    throw error;
  }
}

/**
 * A signed-in user invites someone to `accountId` (an account of their scope, else AdminError as for a missing one) as
 * `role` (default member): a one-time invitation link (24 h, single use, only its digest stored), returned once.
 */
export async function inviteUser(
  storage: Storage,
  input: {
    accountId: string;
    email: string;
    role?: Role;
    invitedBy: Omit<Extract<Actor, { kind: 'user' }>, 'kind'>;
    now: Date;
  },
): Promise<{ id: string; token: string; expiresAt: Date }> {
  return createUser(storage, {
    accountId: input.accountId,
    email: input.email,
    role: input.role ?? 'member',
    actor: { kind: 'user', ...input.invitedBy },
    now: input.now,
  });
}

/** The flag of `callctl setup` and `callctl user create` that allows an email another account's user already has. */
export const ALLOW_EXISTING_EMAIL_FLAG = '--allow-existing-email';

/** Refuses (for the operator) an email that already has a user anywhere, naming where and the flag that allows it. */
async function refuseExistingEmail(storage: Storage, email: string): Promise<void> {
  const users = await storage.users.findUsersByEmail(email);
  if (users.length === 0) return;
  const where = users.map((u) => `${u.accountName} (account ${u.accountId})`).join(', ');
  throw new AdminError(
    `${email} already has a dashboard user in ${where}. To add another user with this email anyway, add ` +
      `${ALLOW_EXISTING_EMAIL_FLAG}: signing in then asks which account to open.`,
  );
}

export const CANNOT_DISABLE_SELF = 'You cannot disable yourself. Another agency user can, or an operator with callctl.';

/**
 * Disables the user (one the actor reaches): they cannot sign in, their sessions end at once and their unused links
 * stop working.
 */
export async function disableUser(storage: Storage, userId: string, actor: Actor, now: Date) {
  const user = await findUser(storage, userId, actor);
  if (actor.kind === 'user' && actor.userId === user.id) throw new AdminError(CANNOT_DISABLE_SELF);
  const ended = await storage.transaction(async (tx) => {
    await keepLastOwner(tx, user);
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

/**
 * Enables a disabled user again (one the actor reaches): they can sign in with their password; their old links stay
 * void (send a new one).
 */
export async function enableUser(storage: Storage, userId: string, actor: Actor, now: Date) {
  const user = await findUser(storage, userId, actor);
  const changed = await storage.transaction(async (tx) => {
    const changed = await tx.users.markEnabled(user.id);
    if (changed) await audit(tx, user.accountId, actor, 'user_enabled', now, { user_id: user.id, email: user.email });
    return changed;
  });
  return { id: user.id, enabled: true, already_enabled: !changed };
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

/**
 * Sets the password from a one-time link; the link is used up, the user's other links stop working, and any session
 * the user had ends.
 */
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
    // The first link used wins: the user's other links (an invitation, an admin's, a reset) stop working.
    const voided = await tx.tokens.expireUserTokens(used.userId, input.now);
    await tx.users.setPasswordHash(used.userId, hash);
    await tx.sessions.deleteUserSessions(used.userId);
    const user = await tx.users.findUserById(used.userId);
    await audit(tx, user!.accountId, { kind: 'user', userId: used.userId, ip: input.ip }, 'password_set', input.now, {
      link: used.purpose,
      other_links_ended: voided,
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

/** A new agency on the agency plan and its first user, with the user's set-password link: the one-command start. */
export async function setupAgency(
  storage: Storage,
  input: { agencyName: string; email: string; now: Date; allowExistingEmail?: boolean },
) {
  const name = input.agencyName.trim();
  if (!name) throw new AdminError('An agency needs a name');
  const problem = readableNameProblem(name);
  if (problem) throw new AdminError(`An agency's name ${problem}`);
  if (!isPlausibleEmail(input.email)) throw new AdminError(notAnEmailAddress(input.email));
  // Run twice, setup would make a second agency with a second user of the same email: refused unless allowed (the
  // same person may run two agencies; signing in then asks which), before anything is made.
  if (!input.allowExistingEmail) await refuseExistingEmail(storage, normalizeEmail(input.email));
  const agency = await storage.accounts.insertAgency({ name, plan: 'agency' });
  try {
    const user = await createUser(storage, {
      accountId: agency.id,
      email: input.email,
      actor: { kind: 'operator' },
      now: input.now,
      allowExistingEmail: true,
    });
    return { agencyId: agency.id, ...user };
  } catch (error) {
    // Nothing half-made: the agency goes when its first user could not be created.
    await storage.accounts.deleteAccount(agency.id).catch(() => undefined);
    throw error;
  }
}
