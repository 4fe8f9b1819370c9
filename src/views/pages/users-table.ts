// The users table's model (users-table.eta), shown on the Users page and a client's page.
import type { PeopleFrom } from './users-invite-form.js';

export interface PersonRow {
  id: string;
  email: string;
  accountName: string;
  status: string;
  created: string;
  lastSignIn: string;
  /** Whether the viewer gets a Disable button for this user (an agency user; not themselves; not disabled yet). */
  canDisable: boolean;
  /** "New sign-in link": the same users as Disable (a disabled user is enabled first). */
  canLink: boolean;
  /** "Enable": an agency user, for a disabled user. */
  canEnable: boolean;
  isViewer: boolean;
}

/** The users table (src/views/users-table.eta). */
export interface UsersTableModel {
  people: PersonRow[];
  showAccount: boolean;
  canManage: boolean;
  from: PeopleFrom;
}
