// "Recent sign-in": generating a key or a webhook secret needs the password entered within the last 10 minutes.
export const RECENT_SIGN_IN_MS = 10 * 60 * 1000;

/** `authenticatedAt`: when the session's user last typed their password (sign-in or re-entry), epoch ms. */
export function isRecentSignIn(authenticatedAt: number | undefined, now: Date): boolean {
  if (typeof authenticatedAt !== 'number') return false;
  const age = now.getTime() - authenticatedAt;
  return age >= 0 && age <= RECENT_SIGN_IN_MS;
}
