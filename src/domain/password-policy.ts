// What a password must be (OWASP ASVS 5 level 2): 8 to 128 characters, no composition rules, not one of the most
// common passwords. The list is @zxcvbn-ts/language-common's (about 18,000 entries of 8 characters or more).
import { dictionary } from '@zxcvbn-ts/language-common';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

let common: Set<string> | undefined;

// Built on first use: the list is decompressed when the module loads, the set only when a password is checked.
function commonPasswords(): Set<string> {
  common ??= new Set(
    dictionary['passwords-common'].filter((p) => p.length >= PASSWORD_MIN_LENGTH).map((p) => p.toLowerCase()),
  );
  return common;
}

/** Characters as people count them (an emoji is one), as HTML's minlength/maxlength do not: code points. */
function length(password: string): number {
  return [...password].length;
}

/** Why `password` is refused, in words for the person choosing it; null when it is acceptable. */
export function passwordProblem(password: string, context: { email?: string } = {}): string | null {
  const n = length(password);
  if (n < PASSWORD_MIN_LENGTH) return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (n > PASSWORD_MAX_LENGTH) return `Use at most ${PASSWORD_MAX_LENGTH} characters.`;
  const lowered = password.toLowerCase();
  if (commonPasswords().has(lowered)) return 'This password is one of the most common ones; choose another.';
  if (
    context.email &&
    (lowered === context.email.toLowerCase() || lowered === context.email.split('@')[0]?.toLowerCase())
  ) {
    return 'Do not use your email address as your password.';
  }
  return null;
}
