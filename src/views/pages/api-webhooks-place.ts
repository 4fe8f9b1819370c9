// Settings → API & Webhooks lives in two places: the viewer's own settings, and a client's (agency users only). What
// every page and route of the section shares: the place, its account, and what the section's route plugins are given.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AccountInScope } from '../../storage/index.js';

export type Account = AccountInScope;

/** The two places the section lives: the viewer's own settings, and a client's (agency users only). */
export interface Place {
  prefix: string;
  /** What the family resolves the account from: the viewer's own, or the client named by `:id`. */
  managed: 'own' | 'client';
  param?: string;
  account(request: FastifyRequest, reply: FastifyReply): Promise<Account>;
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

/** What each route plugin of the section is registered with: its place, and the recent sign-in its secrets need. */
export interface SectionOptions {
  place: Place;
  recent: preHandlerAsyncHookHandler;
}
