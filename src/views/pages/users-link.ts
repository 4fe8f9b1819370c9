// The users-link page's model: what src/views/pages/users-link.eta reads (with the partials it includes).
import type { KeysOf, OneTimeLink } from './model-parts.js';

export type UsersLinkModel = { made: OneTimeLink; back: string };

/** The fields users-link.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const USERS_LINK_FIELDS = ['made', 'back'] as const satisfies readonly KeysOf<UsersLinkModel>[];
