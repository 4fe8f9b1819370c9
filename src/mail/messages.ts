// The words of the dashboard's e-mails: plain text, the one-time link on a line of its own.
import type { MailMessage } from './mailer.js';

const SIGN_OFF = 'If you did not expect this e-mail, you can ignore it: nothing changes until the link is used.';

export function invitationMail(input: { to: string; accountName: string; link: string; expires: string }): MailMessage {
  return {
    to: input.to,
    subject: `You are invited to the ${input.accountName} dashboard`,
    text: `You are invited to the dashboard of ${input.accountName}. Open this link to choose your password:\n\n${input.link}\n\nIt works once, until ${input.expires}.\n\n${SIGN_OFF}\n`,
  };
}

export function signInLinkMail(input: { to: string; accountName: string; link: string; expires: string }): MailMessage {
  return {
    to: input.to,
    subject: `Your new sign-in link for ${input.accountName}`,
    text: `An admin of ${input.accountName} made you a new sign-in link. Open it to choose your password:\n\n${input.link}\n\nIt works once, until ${input.expires}; earlier links no longer work.\n\n${SIGN_OFF}\n`,
  };
}

export function passwordResetMail(input: {
  to: string;
  accountName: string;
  link: string;
  expires: string;
}): MailMessage {
  return {
    to: input.to,
    subject: `Reset your password for ${input.accountName}`,
    text: `Someone (we hope you) asked to reset the dashboard password of ${input.to} for ${input.accountName}. Open this link to choose a new password:\n\n${input.link}\n\nIt works once, until ${input.expires}; earlier links no longer work.\n\n${SIGN_OFF}\n`,
  };
}
