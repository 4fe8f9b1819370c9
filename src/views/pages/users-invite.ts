// The users-invite page's model: what src/views/pages/users-invite.eta reads (with the partials it includes).
import type { KeysOf, OneTimeLink } from './model-parts.js';
import type { InviteFormModel } from './users-invite-form.js';

/** The invitation link once made, or the form again with its problem. */
export type UsersInviteModel = { back: string } & ({ invited: OneTimeLink } | ({ invited: null } & InviteFormModel));

/** The fields users-invite.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const USERS_INVITE_FIELDS = [
  'back',
  'invited',
  'invite',
  'from',
] as const satisfies readonly KeysOf<UsersInviteModel>[];
