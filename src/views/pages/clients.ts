// The clients page's model: what src/views/pages/clients.eta reads (with the partials it includes).
import type { NamedList } from './list-filter.js';
import type { KeysOf, Problem } from './model-parts.js';

export type ClientsModel = {
  agencyOff: boolean;
  clients: {
    href: string;
    name: string;
    created: string;
    access: string;
    keyPrefix: string | null;
    webhookSet: boolean;
    activeUsers: number;
  }[];
  list: NamedList;
  form: { name: string; problem: Problem; maxLength: number };
};

/** The fields clients.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const CLIENTS_FIELDS = [
  'agencyOff',
  'clients',
  'list',
  'form',
] as const satisfies readonly KeysOf<ClientsModel>[];
