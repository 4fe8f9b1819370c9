// Route guards for dashboard pages and actions (use them as a route's preHandler) and the tenancy lookup every page
// about an account goes through. Another tenant's object is a 404, never a 403: existence is not revealed.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type {} from '@fastify/sensible';
import { canManageAccount, type Viewer } from '../../src/domain/people-tenancy.js';
import { isUuid } from '../../src/domain/ids.js';
import { isRecentSignIn } from '../../src/domain/recent-sign-in.js';
import type { ActiveUser } from '../../src/storage/users.js';

export const SIGN_IN_PATH = '/dashboard/sign-in';
export const CONFIRM_PASSWORD_PATH = '/dashboard/confirm-password';

/** Where to come back to after signing in or confirming the password: this page for a GET, else `fallback`. */
function returnPath(request: FastifyRequest, fallback: string): string {
  return request.method === 'GET' ? request.url : fallback;
}

/** The signed-in user; the guards have run, so it is there. */
export function viewerOf(request: FastifyRequest): ActiveUser {
  if (!request.viewer) throw new Error('viewerOf() on a route without requireUser');
  return request.viewer;
}

/** Signed in, or sent to the sign-in page (and back here afterwards). */
export const requireUser: preHandlerAsyncHookHandler = async function (request, reply) {
  if (request.viewer) return;
  await reply.redirect(`${SIGN_IN_PATH}?next=${encodeURIComponent(returnPath(request, '/dashboard'))}`, 303);
};

/** An agency user; a client user gets the same 404 as for a page that does not exist. */
export const requireAgencyUser: preHandlerAsyncHookHandler = async function (request, reply) {
  if (!request.viewer) return requireUser.call(this, request, reply);
  if (request.viewer.accountKind !== 'agency') throw reply.server.httpErrors.notFound();
};

/**
 * The password typed within the last 10 minutes (sign-in or re-entry), else the re-enter-password page, which comes
 * back to `returnTo` (default: this page for a GET, the overview otherwise). For actions that reveal or replace a
 * secret: guard the page that shows the button and the POST that does it.
 */
export function requireRecentSignIn(returnTo?: (request: FastifyRequest) => string): preHandlerAsyncHookHandler {
  return async function (request, reply) {
    if (!request.viewer) return requireUser.call(this, request, reply);
    if (isRecentSignIn(request.session.authenticatedAt, request.server.now())) return;
    const next = returnTo?.(request) ?? returnPath(request, '/dashboard');
    await reply.redirect(`${CONFIRM_PASSWORD_PATH}?next=${encodeURIComponent(next)}`, 303);
  };
}

/** Whether the session's password entry is recent (for a page that shows a notice rather than redirecting). */
export function hasRecentSignIn(request: FastifyRequest): boolean {
  return isRecentSignIn(request.session.authenticatedAt, request.server.now());
}

/**
 * The account `accountId` when the viewer may manage it (their own; an agency user's clients), else a 404 (no such
 * id, or another tenant's). Every route taking an account id from the URL or a form goes through this.
 */
export async function managedAccount(request: FastifyRequest, reply: FastifyReply, accountId: string) {
  const viewer: Viewer = viewerOf(request);
  const account = isUuid(accountId)
    ? await request.server.prisma.account.findUnique({
        where: { id: accountId },
        select: { id: true, kind: true, name: true, agencyId: true, plan: true, apiAccessEnabled: true },
      })
    : null;
  if (!account || !canManageAccount(viewer, account)) throw reply.server.httpErrors.notFound();
  return account;
}

/** The ids of every account the viewer manages: their own and, for an agency user, all its clients. */
export async function managedAccountIds(request: FastifyRequest): Promise<string[]> {
  const viewer = viewerOf(request);
  if (viewer.accountKind === 'client') return [viewer.accountId];
  const clients = await request.server.prisma.account.findMany({
    where: { agencyId: viewer.accountId },
    select: { id: true },
  });
  return [viewer.accountId, ...clients.map((c) => c.id)];
}
