// The Clients and Users pages' forms: create a client, invite a user, disable or enable a user, make a new link. The
// schema states an invitation's address shape and account id; what no pattern says (a readable client name, an address
// of at most 254 characters, one not taken) src/admin checks, in the words callctl gives too.
import { Type, type Static } from '@sinclair/typebox';
import { USER_EMAIL_SHAPE } from '../user-email.js';
import { ROLES } from '../user-role.js';
import { UUID_PATTERN } from '../uuid.js';
import { Form } from './forms.js';

/** A user's role in their account (src/domain/roles.ts says what each may do). */
const RoleField = Type.Union(
  ROLES.map((role) => Type.Literal(role)),
  { description: 'owner (everything, users and roles included), admin, member or viewer (reads only)' },
);

/** The page a people form was on, to go back to (or re-render) afterwards. */
const FromField = Type.Optional(
  Type.Union([Type.Literal('users'), Type.Literal('client')], {
    description: 'The page the form was on: the Users page or the client detail page',
  }),
);

export const CreateClientForm = Form(
  {
    name: Type.String({
      maxLength: 1000,
      description:
        "The client's name (1 to 200 characters once trimmed; a visible character, no control or text-direction characters)",
    }),
  },
  'Create a client of the signed-in agency',
);
export type CreateClientForm = Static<typeof CreateClientForm>;

export const ClientParams = Type.Object({
  id: Type.String({ description: "The client's account id (404 unless the viewer's agency owns it)" }),
});
export type ClientParams = Static<typeof ClientParams>;

export const InviteUserForm = Form(
  {
    email: Type.String({
      maxLength: 320,
      pattern: `^\\s*${USER_EMAIL_SHAPE}\\s*$`,
      description:
        "The new user's email address: one @, something on each side, a dot after it, no blanks inside (blanks " +
        'around it are dropped; any case; at most 254 characters; must not be taken)',
    }),
    account: Type.String({
      maxLength: 64,
      pattern: UUID_PATTERN,
      description: 'The account the new user belongs to: the agency or one of its clients',
    }),
    role: Type.Optional(RoleField),
    from: FromField,
  },
  'Invite a user: they get a one-time link (24 h) to choose their password, shown once to the inviting user',
);
export type InviteUserForm = Static<typeof InviteUserForm>;

export const UserParams = Type.Object({
  id: Type.String({ description: "The user's id (404 unless the viewer manages the user's account)" }),
});
export type UserParams = Static<typeof UserParams>;

export const DisableUserForm = Form(
  { from: FromField },
  'Disable a user: they cannot sign in, and their sessions end at once',
);
export type DisableUserForm = Static<typeof DisableUserForm>;

export const EnableUserForm = Form(
  { from: FromField },
  'Enable a disabled user again: they can sign in with their password',
);
export type EnableUserForm = Static<typeof EnableUserForm>;

export const UserLinkForm = Form(
  { from: FromField },
  "Make a new one-time link (24 h) for the user to set their password, shown once; the user's earlier links stop working",
);
export type UserLinkForm = Static<typeof UserLinkForm>;

export const UserRoleForm = Form(
  { role: RoleField, from: FromField },
  "Give a user a role in their account (the account's last active owner stays one)",
);
export type UserRoleForm = Static<typeof UserRoleForm>;

export const ChooseAccountForm = Form(
  {
    user: Type.String({
      maxLength: 64,
      pattern: UUID_PATTERN,
      description:
        'The user to sign in as: one of those the typed password opened (kept in the session since the password was checked)',
    }),
  },
  'Sign in: choose the account to open when one email has users in several accounts',
);
export type ChooseAccountForm = Static<typeof ChooseAccountForm>;
