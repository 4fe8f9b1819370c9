// Settings → API & Webhooks lives in two places: the viewer's own settings, and a client's (agency users only).
// What every part of the section shares: the place, its account lookup, and who is acting.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AccountInScope } from '../../../storage/index.js';

export type Account = AccountInScope;
/** A route plugin's instance: the TypeBox type provider's, so each route's types come from its schema. */
export type Routes = Parameters<FastifyPluginAsyncTypebox>[0];
export type Req = FastifyRequest;

/** The two places the section lives: the viewer's own settings, and a client's (agency users only). */
export interface Place {
  prefix: string;
  /** What the family resolves the account from: the viewer's own, or the client named by `:id`. */
  managed: 'own' | 'client';
  param?: string;
  account(request: Req, reply: FastifyReply): Promise<Account>;
  base(accountId: string): string;
}

export const OWN: Place = {
  prefix: '/settings/api-webhooks',
  managed: 'own',
  account: async (request) => request.managed('own'),
  base: () => '/dashboard/settings/api-webhooks',
};

export const CLIENT: Place = {
  prefix: '/clients/:id/api-webhooks',
  // Only a client of the viewer's agency: the agency's own id here is no client page (404, like any other).
  managed: 'client',
  param: 'id',
  account: async (request) => request.managed('client'),
  base: (accountId) => `/dashboard/clients/${accountId}/api-webhooks`,
};

/** After re-entering the password: back to the page that shows the button (a POST cannot be repeated by a redirect). */
export function recentSignIn(fastify: Routes, place: Place): preHandlerAsyncHookHandler {
  const base = (request: Req) => place.base((request.params as { id?: string }).id ?? '');
  return fastify.dashboardGuards.requireRecentSignIn(
    (request) => `${base(request)}${request.routeOptions.url?.endsWith('/webhook') ? '/webhook' : '/key'}`,
  );
}
