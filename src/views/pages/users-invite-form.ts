// The invitation form's model (users-invite-form.eta), on the Users page, a client's page and after an invitation.
import type { Role } from '../../domain/roles.js';
import type { Problem } from './model-parts.js';

/** The "from" of a people form: the page it was on. */
export type PeopleFrom = 'users' | 'client';

/** The invitation form (src/views/users-invite-form.eta). */
export interface InviteFormModel {
  invite: {
    accounts: { id: string; name: string }[];
    account: string;
    email: string;
    /** The role the new user gets (chosen in a select; member unless changed). */
    role: Role;
    roles: readonly Role[];
    problem: Problem;
    mailEnabled: boolean;
  };
  from: PeopleFrom;
}
