// callctl's dashboard-people commands: create a user (with a one-time set-password link, shown once), give one a role,
// make a new link for an existing user (voiding earlier ones), disable and enable one, and `setup`, the one-command start (an
// agency on the agency plan and its first user). With SMTP_URL set, the links are e-mailed too ("emailed" says
// whether the SMTP server took the message).
import { newSignInLink, resolveUser, sendAuditedMail } from '../admin/user-links.js';
import { setUserRole } from '../admin/user-roles.js';
import { createUser, disableUser, enableUser, setPasswordUrl, setupAgency } from '../admin/users.js';
import { isRole, ROLES, type Role } from '../domain/roles.js';
import { isPlausibleEmail, normalizeEmail } from '../domain/user-email.js';
import { formatTime } from '../domain/utc-time.js';
import { Mailer } from '../mail/mailer.js';
import { invitationMail, signInLinkMail, type MailKind } from '../mail/messages.js';
import type { MailMessage } from '../mail/mailer.js';
import type { Command, Context } from './command-types.js';
import type { Values } from './flags.js';
import { UsageError } from './usage-error.js';

/**
 * E-mails `message` when SMTP_URL is set, audited on the account as the operator's: {} without SMTP_URL, else whether
 * it was sent and, if not, why.
 */
async function emailed(
  { storage, config, now }: Context,
  input: { accountId: string; kind: MailKind; message: MailMessage },
): Promise<{ emailed?: boolean; email_error?: string }> {
  if (!config.SMTP_URL) return {};
  let problem = 'not sent';
  const mailer = new Mailer(config.SMTP_URL, config.smtpFrom, {
    warn: (fields) => {
      problem = (fields as { err?: { message?: string } }).err?.message ?? problem;
    },
  });
  try {
    const sent = await sendAuditedMail(storage, mailer, {
      ...input,
      actor: { kind: 'operator' },
      now,
    });
    return sent ? { emailed: true } : { emailed: false, email_error: problem };
  } finally {
    await mailer.close();
  }
}

const LINK_NOTICE =
  'This link is shown only once and works once, for 24 hours: open it in a browser to choose the password.';

// Command-line mistakes found before the database is opened are usage errors (exit 2).
function checkEmail(values: Values): void {
  if (values.email !== undefined && !isPlausibleEmail(values.email))
    throw new UsageError(`"${values.email}" is not an email address`);
}

function checkRole(role: string | undefined): void {
  if (role !== undefined && !isRole(role))
    throw new UsageError(`Unknown role "${role}": expected one of ${[...ROLES].reverse().join(', ')}`);
}

export const USER_COMMANDS: Command[] = [
  {
    words: ['user', 'create'],
    args: [],
    flags: ['account', 'email', 'role', 'allow-existing-email'],
    required: ['account', 'email'],
    usage:
      'callctl user create --account <account-id> --email <email> [--role owner|admin|member|viewer] ' +
      '[--allow-existing-email]',
    summary:
      'Create a dashboard user of an account (role: owner unless --role says otherwise); prints a one-time link to ' +
      'set the password (24 h). An email that already has a user elsewhere is refused without --allow-existing-email',
    notice: LINK_NOTICE,
    check: (_args, values) => {
      checkEmail(values);
      checkRole(values.role);
    },
    run: async (ctx, _args, values) => {
      const { storage, config, now } = ctx;
      const user = await createUser(storage, {
        accountId: values.account ?? '',
        email: values.email ?? '',
        actor: { kind: 'operator' },
        allowExistingEmail: values['allow-existing-email'] === true,
        role: isRole(values.role) ? values.role : 'owner',
        now: now(),
      });
      const link = setPasswordUrl(config, user.token);
      const mail = config.SMTP_URL
        ? invitationMail({
            to: normalizeEmail(values.email ?? ''),
            accountName: await storage.users.accountNameOf(user.id),
            link,
            expires: formatTime(user.expiresAt),
          })
        : null;
      const sent = mail
        ? await emailed(ctx, { accountId: values.account ?? '', kind: 'invitation', message: mail })
        : {};
      return { id: user.id, role: isRole(values.role) ? values.role : 'owner', set_password_url: link, ...sent };
    },
  },
  {
    words: ['user', 'role'],
    args: ['user-id', 'role'],
    flags: [],
    usage: 'callctl user role <user-id> owner|admin|member|viewer',
    summary:
      "Give a dashboard user a role in their account (an account's last active owner stays one): owner (everything), " +
      'admin (keys, webhooks, API access, agents, do-not-call), member (agents, calls, do-not-call), viewer (reads)',
    check: (args) => checkRole(args[1] ?? ''),
    run: ({ storage, now }, args) =>
      setUserRole(storage, args[0] ?? '', (args[1] ?? '') as Role, { kind: 'operator' }, now()),
  },
  {
    words: ['user', 'disable'],
    args: ['user-id'],
    flags: [],
    usage: 'callctl user disable <user-id>',
    summary: 'Disable a dashboard user: they cannot sign in, their sessions end at once, their links stop working',
    run: ({ storage, now }, args) => disableUser(storage, args[0] ?? '', { kind: 'operator' }, now()),
  },
  {
    words: ['user', 'enable'],
    args: ['user-id'],
    flags: [],
    usage: 'callctl user enable <user-id>',
    summary: 'Enable a disabled dashboard user again: they can sign in with their password (their old links stay void)',
    run: ({ storage, now }, args) => enableUser(storage, args[0] ?? '', { kind: 'operator' }, now()),
  },
  {
    words: ['user', 'link'],
    args: ['user-id|email'],
    flags: [],
    usage: 'callctl user link <user-id|email>',
    summary:
      'Make a new one-time link (24 h) for an existing user to set their password; their earlier links stop working',
    notice: `${LINK_NOTICE} Their earlier links no longer work.`,
    run: async (ctx, args) => {
      const { storage, config, now } = ctx;
      const made = await newSignInLink(storage, {
        userId: await resolveUser(storage, args[0] ?? '', { kind: 'operator' }),
        actor: { kind: 'operator' },
        now: now(),
      });
      const link = setPasswordUrl(config, made.token);
      const mail = config.SMTP_URL
        ? signInLinkMail({
            to: made.email,
            accountName: await storage.users.accountNameOf(made.userId),
            link,
            expires: formatTime(made.expiresAt),
          })
        : null;
      const user = await storage.users.findUserById(made.userId);
      const sent =
        mail && user ? await emailed(ctx, { accountId: user.accountId, kind: 'sign_in_link', message: mail }) : {};
      return { set_password_url: link, ...sent };
    },
  },
  {
    words: ['setup'],
    args: [],
    flags: ['agency-name', 'email', 'allow-existing-email'],
    required: ['agency-name', 'email'],
    usage: 'callctl setup --agency-name <name> --email <email> [--allow-existing-email]',
    summary:
      'Create an agency (agency plan) and its first dashboard user; prints the one-time link to set the password. ' +
      'An email that already has a user (run twice?) is refused without --allow-existing-email',
    notice: `${LINK_NOTICE} Then sign in at /dashboard.`,
    check: (_args, values) => checkEmail(values),
    run: async ({ storage, config, now }, _args, values) => {
      const made = await setupAgency(storage, {
        agencyName: values['agency-name'] ?? '',
        email: values.email ?? '',
        allowExistingEmail: values['allow-existing-email'] === true,
        now: now(),
      });
      return { agency_id: made.agencyId, user_id: made.id, set_password_url: setPasswordUrl(config, made.token) };
    },
  },
];
