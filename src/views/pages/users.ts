// The users page's model: what src/views/pages/users.eta reads (with the partials it includes).
import type { KeysOf, Problem } from './model-parts.js';
import type { InviteFormModel } from './users-invite-form.js';
import type { UsersTableModel } from './users-table.js';

export type UsersModel = UsersTableModel & InviteFormModel & { problem: Problem };

/** The fields users.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const USERS_FIELDS = [
  'people',
  'showAccount',
  'canManage',
  'from',
  'invite',
  'problem',
] as const satisfies readonly KeysOf<UsersModel>[];
