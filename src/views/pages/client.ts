// The client page's model: what src/views/pages/client.eta reads (with the partials it includes).
import type { KeysOf } from './model-parts.js';
import type { InviteFormModel } from './users-invite-form.js';
import type { UsersTableModel } from './users-table.js';

export type ClientModel = UsersTableModel &
  InviteFormModel & {
    client: {
      name: string;
      agencyName: string;
      plan: string | null;
      created: string;
      access: string;
      keyPrefix: string | null;
      webhookSet: boolean;
    };
    apiWebhooksHref: string;
    sections: { label: string; href: string | null }[];
  };

/** The fields client.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CLIENT_FIELDS = [
  'people',
  'showAccount',
  'canManage',
  'from',
  'roles',
  'invite',
  'client',
  'apiWebhooksHref',
  'sections',
] as const satisfies readonly KeysOf<ClientModel>[];
