// The dashboard's forms and query strings, as TypeBox schemas: route validation and handler types come from here.
// Every form carries `_csrf`. Lengths only bound the input; the password policy (src/domain/password-policy.ts) says
// what a password must be, in words, on the page.
import { Type, type Static, type TProperties } from '@sinclair/typebox';

const CsrfField = Type.String({ maxLength: 512, description: "The form's CSRF token (checked before validation)" });
/** Long enough for any policy message to be the one shown; short enough to bound hashing work. */
const PasswordField = (description: string) => Type.String({ maxLength: 1024, description });
const NextField = Type.Optional(
  Type.String({ maxLength: 2048, description: 'A /dashboard path to go back to afterwards' }),
);

/**
 * A value as a form or query string sends it: empty, or what `pattern` (unanchored) says, with blanks around it (they
 * are trimmed). Each character matches one way only: `^\s*(?:X)?\s*$` says the same, but on a long run of blanks
 * that fails at its end the engine tries every split of the run between the two \s*, in time quadratic in the run's
 * length (docs/performance.md#patterns-in-linear-time). So `pattern` must neither start nor end with anything that
 * matches a blank (test/routes/schema-patterns.test.ts tries every pattern on such runs).
 */
export const blankOr = (pattern: string) => `^\\s*(?:(?:${pattern})\\s*)?$`;

/** A UTC date and time as a datetime-local field sends it: YYYY-MM-DDTHH:MM, seconds optional, a space for the T. */
export const UTC_MINUTE_PATTERN = '^\\s*\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(?::\\d{2})?\\s*$';

/** A form: its fields plus `_csrf`; nothing else is accepted. */
export function Form<T extends TProperties>(properties: T, description: string) {
  return Type.Object({ _csrf: CsrfField, ...properties }, { additionalProperties: false, description });
}

export const CsrfOnlyForm = Form({}, 'A button that only needs the CSRF token');
export type CsrfOnlyForm = Static<typeof CsrfOnlyForm>;

export const SignInForm = Form(
  {
    email: Type.String({ maxLength: 320, description: 'The email the account was created with (any case)' }),
    password: PasswordField('The password'),
    next: NextField,
  },
  'Sign in',
);
export type SignInForm = Static<typeof SignInForm>;

export const SignInQuery = Type.Object({ next: NextField }, { description: 'Where to go after signing in' });
export type SignInQuery = Static<typeof SignInQuery>;

export const SetPasswordForm = Form(
  {
    password: PasswordField('The new password (8 to 128 characters, not a common one)'),
    confirm: PasswordField('The new password again'),
  },
  'Set a password from a one-time link',
);
export type SetPasswordForm = Static<typeof SetPasswordForm>;

export const SetPasswordParams = Type.Object({
  token: Type.String({ maxLength: 64, description: 'The one-time token of the link' }),
});
export type SetPasswordParams = Static<typeof SetPasswordParams>;

export const ForgotPasswordForm = Form(
  {
    email: Type.String({
      maxLength: 320,
      description: 'The email of the dashboard user (any case); the answer is the same for any address',
    }),
  },
  'Ask for a password-reset link by e-mail (only when SMTP_URL is configured)',
);
export type ForgotPasswordForm = Static<typeof ForgotPasswordForm>;

export const ChangePasswordForm = Form(
  {
    current: PasswordField('The current password'),
    password: PasswordField('The new password (8 to 128 characters, not a common one)'),
    confirm: PasswordField('The new password again'),
  },
  'Change the password',
);
export type ChangePasswordForm = Static<typeof ChangePasswordForm>;

export const ConfirmPasswordForm = Form(
  { password: PasswordField('The current password'), next: NextField },
  'Re-enter the password',
);
export type ConfirmPasswordForm = Static<typeof ConfirmPasswordForm>;

export const ConfirmPasswordQuery = Type.Object({ next: NextField }, { description: 'Where to go after confirming' });
export type ConfirmPasswordQuery = Static<typeof ConfirmPasswordQuery>;

export const AuditLogQuery = Type.Object(
  {
    before: Type.Optional(
      Type.String({ maxLength: 100, description: 'Cursor: the page starts after this entry (from "Older")' }),
    ),
  },
  { description: 'One page of the audit log, newest first' },
);
export type AuditLogQuery = Static<typeof AuditLogQuery>;
