// New one-time links for existing users (a lost invitation, a forgotten password): made by an agency user or an
// operator ("New sign-in link", `callctl user link`) or asked for by anyone ("Forgot your password?"). A link made by
// an admin or an operator voids the user's earlier unused links; a reset request voids only earlier reset links, so an
// anonymous request never spoils a link someone else issued. Whichever link is used first wins: using one voids the
// others (setPasswordWithLink). A disabled user gets none (enable them first).
import { generateOneTimeToken, ONE_TIME_TOKEN_TTL_MS } from '../domain/one-time-token.js';
import { linkLimitRefusal, PEOPLE_LINK_ACTIONS, PEOPLE_LINK_LIMITS } from '../domain/people-limits.js';
import { isPlausibleEmail, normalizeEmail } from '../domain/user-email.js';
import { formatTime } from '../domain/utc-time.js';
import type { MailMessage } from '../mail/mailer.js';
import type { MailKind } from '../mail/messages.js';
import { type Repositories, type Storage, type TokenPurpose } from '../storage/index.js';
import { AdminError } from './errors.js';
import { accountAndAgency, audit, type Actor, type AuditedActor } from './audit.js';
import { findAccount, findUser, scopeOfActor } from './reach.js';
import { isUuid } from '../../schemas/uuid.js';

export interface NewLink {
  userId: string;
  email: string;
  token: string;
  expiresAt: Date;
}

/** An invitation or a new link refused because its maker (or their agency) is over a limit (src/domain/people-limits.ts). */
export class LinkLimitError extends AdminError {
  override name = 'LinkLimitError';
}

/**
 * In the caller's transaction, before a dashboard user makes an invitation or a link for `accountId`: locks the
 * agency's links until the transaction ends and says whether one more is over a limit. The operator is not limited.
 * The caller has found `accountId` within the actor's reach.
 */
export async function linkLimitCheck(tx: Repositories, accountId: string, actor: AuditedActor, now: Date) {
  if (actor.kind !== 'user') return null;
  const { agencyId } = await accountAndAgency(tx, accountId);
  await tx.tokens.lockAgencyLinks(agencyId);
  const since = new Date(now.getTime() - PEOPLE_LINK_LIMITS.perAgency.windowMs);
  const made = await tx.tokens.linksMadeSince(agencyId, since, PEOPLE_LINK_ACTIONS);
  return linkLimitRefusal(made, actor.userId, now, formatTime);
}

/**
 * Audits the refusal (on the account the link was for, with who asked and from where) and throws it. The caller has
 * found the account within the actor's reach.
 */
export async function refuseOverLimit(
  storage: Storage,
  input: { accountId: string; actor: AuditedActor; what: 'invitation' | 'sign_in_link'; email: string; now: Date },
  refusal: { limit: string; message: string; retryAt: Date },
): Promise<never> {
  await audit(storage, input.accountId, input.actor, 'people_link_refused', input.now, {
    what: input.what,
    email: input.email,
    limit: refusal.limit,
    retry_at: refusal.retryAt.toISOString(),
  });
  throw new LinkLimitError(refusal.message);
}

/** What sends an e-mail and says whether the SMTP server took it (src/mail/mailer.ts's Mailer). */
export interface MailSender {
  send(message: MailMessage): Promise<boolean>;
}

/**
 * Sends a dashboard e-mail and audits it on `accountId` (to whom, which kind, whether the server took it), as caused
 * by `actor`: an account the actor reaches (else AdminError, nothing sent), or the user's own (a reset link they asked
 * for). The message's words are src/mail/messages.ts's; returns whether it was sent.
 */
export async function sendAuditedMail(
  storage: Storage,
  mailer: MailSender,
  input: { accountId: string; actor: AuditedActor; kind: MailKind; message: MailMessage; now: () => Date },
): Promise<boolean> {
  if (input.actor.kind !== 'user' || 'scope' in input.actor) await findAccount(storage, input.accountId, input.actor);
  const sent = await mailer.send(input.message);
  await audit(storage, input.accountId, input.actor, 'email_sent', input.now(), {
    kind: input.kind,
    to: input.message.to,
    sent,
  });
  return sent;
}

export const disabledNoLink = (email: string) =>
  `${email} is disabled: enable them first, then make a new sign-in link.`;

/**
 * What `callctl user link` names: a user id, or an email that belongs to exactly one user (an address is unique per
 * agency, so it can name users of several agencies; the operator then gives the id). Only users the actor reaches.
 */
export async function resolveUser(storage: Storage, idOrEmail: string, actor: Actor): Promise<string> {
  if (isUuid(idOrEmail)) return (await findUser(storage, idOrEmail, actor)).id;
  const email = normalizeEmail(idOrEmail);
  const users = isPlausibleEmail(email) ? await usersReached(storage, email, actor) : [];
  if (users.length === 0) throw new AdminError(`No user ${idOrEmail}`);
  if (users.length > 1) {
    const list = users.map((u) => `${u.id} (${u.accountName})`).join(', ');
    throw new AdminError(
      `${users.length} users have the email ${email}, in different agencies; give the user id: ${list}`,
    );
  }
  return users[0]!.id;
}

/** The users with this address that `actor` reaches. */
async function usersReached(storage: Storage, email: string, actor: Actor) {
  const users = await storage.users.findUsersByEmail(email);
  const scope = scopeOfActor(actor);
  if (scope === null) return users;
  const accounts = await storage.scoped.findAccountsInScope(
    scope,
    users.map((u) => u.accountId),
  );
  const reached = new Set(accounts.map((a) => a.id));
  return users.filter((u) => reached.has(u.accountId));
}

async function replaceLinks(
  storage: Storage,
  user: { id: string; accountId: string; email: string },
  input: {
    purpose: TokenPurpose;
    actor: AuditedActor;
    action: 'sign_in_link_created' | 'password_reset_requested';
    now: Date;
  },
): Promise<NewLink> {
  const generated = generateOneTimeToken();
  const expiresAt = new Date(input.now.getTime() + ONE_TIME_TOKEN_TTL_MS);
  const refused = await storage.transaction(async (tx) => {
    if (input.action === 'sign_in_link_created') {
      const refusal = await linkLimitCheck(tx, user.accountId, input.actor, input.now);
      if (refusal) return refusal;
    }
    // A reset request (anyone may make one) replaces only earlier reset links; an admin's link replaces every link.
    const voided = await tx.tokens.expireUserTokens(
      user.id,
      input.now,
      input.purpose === 'password_reset' ? 'password_reset' : undefined,
    );
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
    return null;
  });
  if (refused)
    await refuseOverLimit(
      storage,
      { accountId: user.accountId, actor: input.actor, what: 'sign_in_link', email: user.email, now: input.now },
      refused,
    );
  return { userId: user.id, email: user.email, token: generated.token, expiresAt };
}

/**
 * A new one-time link (24 h) to set the password of an existing user, shown once to whoever made it; earlier unused
 * links stop working. Refused for a disabled user, and for a dashboard user over a limit of src/domain/people-limits.ts
 * (LinkLimitError, audited), and for a user the actor does not reach (as for a missing one).
 */
export async function newSignInLink(
  storage: Storage,
  input: { userId: string; actor: Actor; now: Date },
): Promise<NewLink> {
  const user = await findUser(storage, input.userId, input.actor);
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
 * used in), each voiding that user's earlier reset links (not an invitation or a link an admin made) and audited on
 * their account with the asking IP. Unknown addresses give nothing; the caller answers the same either way and sends
 * what this returns by e-mail only.
 */
export async function requestPasswordReset(
  storage: Storage,
  input: { email: string; ip: string | null; now: Date },
): Promise<(NewLink & { accountId: string; accountName: string })[]> {
  const email = normalizeEmail(input.email);
  if (!isPlausibleEmail(email)) return [];
  const users = (await storage.users.findUsersByEmail(email)).filter((u) => !u.disabled);
  const links = [];
  for (const user of users) {
    const actor: AuditedActor = { kind: 'user', userId: user.id, ip: input.ip };
    links.push({
      ...(await replaceLinks(storage, user, {
        purpose: 'password_reset',
        actor,
        action: 'password_reset_requested',
        now: input.now,
      })),
      accountId: user.accountId,
      accountName: user.accountName,
    });
  }
  return links;
}
