// Users' email addresses: compared case-insensitively, so stored trimmed and lowercased (the database checks it).
import { USER_EMAIL_SHAPE } from '../../schemas/user-email.js';

const EMAIL_SHAPE = new RegExp(`^${USER_EMAIL_SHAPE}$`);
export const EMAIL_MAX_LENGTH = 254;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isPlausibleEmail(email: string): boolean {
  const normalized = normalizeEmail(email);
  return normalized.length <= EMAIL_MAX_LENGTH && EMAIL_SHAPE.test(normalized);
}
