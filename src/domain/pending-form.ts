// A form sent when the password had to be typed again (src/domain/recent-sign-in.ts): its fields are kept in the
// session, server-side, and the form's page shows them filled in after the re-check, so nothing typed is lost. Never
// kept: the CSRF token and any field of a password, secret or token. The page's next POST validates them as any.

/** What the session keeps: the page to come back to, the form's action, its fields, and when. */
export interface PendingForm {
  path: string;
  action: string;
  fields: Record<string, string>;
  at: number;
}

/** How long a kept form waits for the re-check (the person may have to look the password up). */
export const PENDING_FORM_MS = 15 * 60 * 1000;
const MAX_FIELDS = 20;
const MAX_FIELD_LENGTH = 4096;
const NEVER_KEPT = /^_csrf$|password|passphrase|secret|token|^current$/i;

/** The fields of a form's body that may be kept: short strings, not the CSRF token, a password, a secret or a token. */
export function keptFields(body: unknown): Record<string, string> {
  if (typeof body !== 'object' || body === null) return {};
  const kept: [string, string][] = [];
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (kept.length >= MAX_FIELDS) break;
    if (NEVER_KEPT.test(name) || typeof value !== 'string' || value.length > MAX_FIELD_LENGTH) continue;
    kept.push([name, value]);
  }
  return Object.fromEntries(kept);
}

/**
 * The fields of the form sent to `action` that the page at `path` shows again, once: the caller removes the kept
 * form from the session when this returns fields (or when it lapsed). Null: none kept for this page, or too old.
 */
export function restoredFields(
  pending: PendingForm | undefined,
  where: { path: string; action: string },
  now: Date,
): Record<string, string> | null {
  if (!pending || pending.path !== where.path || pending.action !== where.action) return null;
  const age = now.getTime() - pending.at;
  return age >= 0 && age <= PENDING_FORM_MS ? pending.fields : null;
}
