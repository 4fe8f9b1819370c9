// callctl's dashboard-people commands: create a user (with a one-time set-password link, shown once), disable one,
// and `setup`, the one-command start (an agency on the agency plan and its first user).
import { createUser, disableUser, setPasswordUrl, setupAgency } from '../admin/users.js';
import { isPlausibleEmail } from '../domain/user-email.js';
import type { Command, Values } from './commands.js';

const LINK_NOTICE = 'This link is shown only once and works once, for 24 hours: open it in a browser to choose the password.';

// Command-line mistakes found before the database is opened are usage errors (exit 2); UsageError is not imported
// from commands.ts (which imports this file), so the check throws its own.
class EmailUsageError extends Error {
  override name = 'UsageError';
}

function checkEmail(values: Values): void {
  if (values.email !== undefined && !isPlausibleEmail(values.email)) throw new EmailUsageError(`"${values.email}" is not an email address`);
}

export const USER_COMMANDS: Command[] = [
  {
    words: ['user', 'create'],
    args: [],
    flags: ['account', 'email'],
    required: ['account', 'email'],
    usage: 'callctl user create --account <account-id> --email <email>',
    summary: 'Create a dashboard user of an account; prints a one-time link to set the password (24 h)',
    notice: LINK_NOTICE,
    check: (_args, values) => checkEmail(values),
    run: async ({ prisma, config }, _args, values) => {
      const user = await createUser(prisma, { accountId: values.account ?? '', email: values.email ?? '', actor: { kind: 'operator' } });
      return { id: user.id, set_password_url: setPasswordUrl(config, user.token) };
    },
  },
  {
    words: ['user', 'disable'],
    args: ['user-id'],
    flags: [],
    usage: 'callctl user disable <user-id>',
    summary: "Disable a dashboard user: they cannot sign in, their sessions end at once, their links stop working",
    run: ({ prisma }, args) => disableUser(prisma, args[0] ?? '', { kind: 'operator' }),
  },
  {
    words: ['setup'],
    args: [],
    flags: ['agency-name', 'email'],
    required: ['agency-name', 'email'],
    usage: 'callctl setup --agency-name <name> --email <email>',
    summary: 'Create an agency (agency plan) and its first dashboard user; prints the one-time link to set the password',
    notice: `${LINK_NOTICE} Then sign in at /dashboard.`,
    check: (_args, values) => checkEmail(values),
    run: async ({ prisma, config }, _args, values) => {
      const made = await setupAgency(prisma, { agencyName: values['agency-name'] ?? '', email: values.email ?? '' });
      return { agency_id: made.agencyId, user_id: made.id, set_password_url: setPasswordUrl(config, made.token) };
    },
  },
];
