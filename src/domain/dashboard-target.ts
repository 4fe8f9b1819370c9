// Where a `next` (after signing in, after re-entering the password) or a redirect may send the browser: our own
// pages only, in a form no client or `writeHead` can misread.
/** Any origin would do: a target is parsed against it only to learn whether it stays on it. */
const PARSE_BASE = 'https://dashboard.invalid';
/** Longer than any page of ours with its query (the form field allows 2048). */
const MAX_TARGET_LENGTH = 2048;

/**
 * Where a `next` may send the browser: one of our pages, as `URL` re-serialises it (dot segments resolved, every
 * character outside printable ASCII percent-encoded, the fragment dropped), so a Location header built from it can
 * hold nothing a client or `writeHead` would misread. Null for anything else: another origin (`//host`, a scheme),
 * a path outside /dashboard (`/dashboard/../api`), and a backslash or a control character, which `URL` would
 * silently turn into a slash or drop.
 */
export function dashboardTarget(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > MAX_TARGET_LENGTH || !value.startsWith('/')) return null;
  // eslint-disable-next-line no-control-regex -- the control characters are what this refuses
  if (/[\\\u0000-\u001f\u007f]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, PARSE_BASE);
  } catch {
    return null;
  }
  if (url.origin !== PARSE_BASE || !(url.pathname === '/dashboard' || url.pathname.startsWith('/dashboard/')))
    return null;
  const target = `${url.pathname}${url.search}`;
  return /^[\x21-\x7e]+$/.test(target) && target.length <= MAX_TARGET_LENGTH ? target : null;
}

/** Only our own pages, already in the form `dashboardTarget` gives them. */
export function isDashboardPath(value: unknown): value is string {
  return typeof value === 'string' && dashboardTarget(value) === value;
}
