// New one-time links for existing users (a lost invitation, a forgotten password): made by an agency user or an
// operator ("New sign-in link", `callctl user link`) or asked for by the person ("Forgot your password?"). Each new
// link voids the user's earlier unused links; a disabled user gets none (enable them first).
import { generateOneTimeToken, ONE_TIME_TOKEN_TTL_MS } from '../domain/one-time-token.js';
import { isPlausibleEmail, normalizeEmail } from '../domain/user-email.js';
import { type Storage, type TokenPurpose } from '../storage/index.js';
import { AdminError } from './errors.js';
import { audit, type Actor } from './audit.js';
import { isUuid } from '../../schemas/uuid.js';

export interface NewLink {
  userId: string;
  email: string;
  token: string;
  expiresAt: Date;
}

export const disabledNoLink = (email: string) =>
  `${email} is disabled: enable them first, then make a new sign-in link.`;

/**
 * What `callctl user link` names: a user id, or an email that belongs to exactly one user (an address is unique per
 * agency, so it can name users of several agencies; the operator then gives the id).
 */
export async function resolveUser(storage: Storage, idOrEmail: string): Promise<string> {
  if (isUuid(idOrEmail)) {
    if (!(await storage.users.findUserById(idOrEmail))) throw new AdminError(`No user ${idOrEmail}`);
    return idOrEmail;
  }
  const email = normalizeEmail(idOrEmail);
  const users = isPlausibleEmail(email) ? await storage.users.findUsersByEmail(email) : [];
  if (users.length === 0) throw new AdminError(`No user ${idOrEmail}`);
  if (users.length > 1) {
    const list = users.map((u) => `${u.id} (${u.accountName})`).join(', ');
    throw new AdminError(
      `${users.length} users have the email ${email}, in different agencies; give the user id: ${list}`,
    );
  }
  return users[0]!.id;
}

async function replaceLinks(
  storage: Storage,
  user: { id: string; accountId: string; email: string },
  input: {
    purpose: TokenPurpose;
    actor: Actor;
    action: 'sign_in_link_created' | 'password_reset_requested';
    now: Date;
  },
): Promise<NewLink> {
  const generated = generateOneTimeToken();
  const expiresAt = new Date(input.now.getTime() + ONE_TIME_TOKEN_TTL_MS);
  await storage.transaction(async (tx) => {
    const voided = await tx.tokens.expireUserTokens(user.id, input.now);
    const createdById =
      input.actor.kind === 'user' && input.action === 'sign_in_link_created' ? input.actor.userId : null;
    await tx.tokens.insertToken({
      userId: user.id,
      digest: generated.digest,
      purpose: input.purpose,
      createdById,
      createdAt: input.now,
      expiresAt,
    });
    await audit(tx, user.accountId, input.actor, input.action, input.now, {
      user_id: user.id,
      email: user.email,
      earlier_links_ended: voided,
    });
  });
  return { userId: user.id, email: user.email, token: generated.token, expiresAt };
}

/**
 * A new one-time link (24 h) to set the password of an existing user, shown once to whoever made it; earlier unused
 * links stop working. Refused for a disabled user. The caller has checked that the actor manages the user.
 */
export async function newSignInLink(
  storage: Storage,
  input: { userId: string; actor: Actor; now: Date },
): Promise<NewLink> {
  const user = isUuid(input.userId) ? await storage.users.findUserById(input.userId) : null;
  if (!user) throw new AdminError(`No user ${input.userId}`);
  if (user.disabledAt) throw new AdminError(disabledNoLink(user.email));
  return replaceLinks(storage, user, {
    purpose: 'set_password',
    actor: input.actor,
    action: 'sign_in_link_created',
    now: input.now,
  });
}

/**
 * "Forgot your password?": a password-reset link for every enabled user with this address (one per agency it is
 * used in), each voiding that user's earlier links and audited on their account with the asking IP. Unknown
 * addresses give nothing; the caller answers the same either way and sends what this returns by e-mail only.
 */
export async function requestPasswordReset(
  storage: Storage,
  input: { email: string; ip: string | null; now: Date },
): Promise<(NewLink & { accountName: string })[]> {
  const email = normalizeEmail(input.email);
  if (!isPlausibleEmail(email)) return [];
  const users = (await storage.users.findUsersByEmail(email)).filter((u) => !u.disabled);
  const links = [];
  for (const user of users) {
    const actor: Actor = { kind: 'user', userId: user.id, ip: input.ip };
    links.push({
      ...(await replaceLinks(storage, user, {
        purpose: 'password_reset',
        actor,
        action: 'password_reset_requested',
        now: input.now,
      })),
      accountName: user.accountName,
    });
  }
  return links;
}
