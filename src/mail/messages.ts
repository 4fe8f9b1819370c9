// The words of the dashboard's e-mails: plain text, the one-time link on a line of its own. An account's name is chosen
// by a tenant, and these e-mails go to any address from the service's own sender: the name is never in a Subject,
// and in the body it is quoted as a name, cut to a bounded length and kept from reading as a link (see quotedName).
import type { MailMessage } from './mailer.js';

const SIGN_OFF = 'If you did not expect this e-mail, you can ignore it: nothing changes until the link is used.';

/** The most characters of a tenant-chosen name an e-mail shows (longer names end with an ellipsis). */
export const MAIL_NAME_MAX = 60;

/** The kinds of e-mail the dashboard sends, as the audit log names them. */
export type MailKind = 'invitation' | 'sign_in_link' | 'password_reset';

/**
 * A tenant-chosen name as an e-mail shows it: one line of plain text without control or format characters, at most
 * MAIL_NAME_MAX characters, in double quotes. Mail clients turn URLs, host names and addresses into links, so every
 * dot (and the full-width and ideographic dots some read as one) between two characters becomes "[.]", and a
 * scheme's "://" becomes "[:]//": "https://evil.test" reads "https[:]//evil[.]test", which no client links.
 */
export function quotedName(name: string): string {
  const plain = name
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .replace(/"/g, "'")
    .trim();
  const chars = [...plain];
  const bounded =
    chars.length > MAIL_NAME_MAX
      ? `${chars
          .slice(0, MAIL_NAME_MAX - 1)
          .join('')
          .trimEnd()}…`
      : plain;
  const defanged = bounded.replace(/:\/\//g, '[:]//').replace(/[.\u3002\uFF0E\uFF61](?=\S)/gu, '[.]');
  return `"${defanged}"`;
}

interface LinkMailInput {
  to: string;
  accountName: string;
  link: string;
  expires: string;
}

export function invitationMail(input: LinkMailInput): MailMessage {
  return {
    to: input.to,
    subject: 'You are invited to a call dashboard',
    text: `You are invited to the dashboard of the account named ${quotedName(input.accountName)} (a name its users chose). Open this link to choose your password:\n\n${input.link}\n\nIt works once, until ${input.expires}.\n\n${SIGN_OFF}\n`,
  };
}

export function signInLinkMail(input: LinkMailInput): MailMessage {
  return {
    to: input.to,
    subject: 'Your new dashboard sign-in link',
    text: `An admin of the account named ${quotedName(input.accountName)} made you a new sign-in link. Open it to choose your password:\n\n${input.link}\n\nIt works once, until ${input.expires}; earlier links no longer work.\n\n${SIGN_OFF}\n`,
  };
}

export function passwordResetMail(input: LinkMailInput): MailMessage {
  return {
    to: input.to,
    subject: 'Reset your dashboard password',
    text: `Someone (we hope you) asked to reset the dashboard password of ${input.to} for the account named ${quotedName(input.accountName)}. Open this link to choose a new password:\n\n${input.link}\n\nIt works once, until ${input.expires}; earlier reset links no longer work.\n\n${SIGN_OFF}\n`,
  };
}
