// Users' email addresses: compared case-insensitively, so stored trimmed and lowercased (the database checks it).
/** One @, something on each side, a dot in the domain, no spaces: a typo filter, not a validator. */
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const EMAIL_MAX_LENGTH = 254;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isPlausibleEmail(email: string): boolean {
  const normalized = normalizeEmail(email);
  return normalized.length <= EMAIL_MAX_LENGTH && EMAIL_SHAPE.test(normalized);
}
