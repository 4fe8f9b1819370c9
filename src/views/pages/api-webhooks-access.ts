// The api-webhooks-access page's model: what src/views/pages/api-webhooks-access.eta reads (with the partials it includes).
import type { ApiWebhooksPlace, KeysOf } from './model-parts.js';

/** `affected`: the first names (by name) of the `affectedTotal` clients whose keys stop too. */
export type ApiWebhooksAccessModel = ApiWebhooksPlace & { affected: string[]; affectedTotal: number };

/** The fields api-webhooks-access.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const API_WEBHOOKS_ACCESS_FIELDS = [
  'account',
  'base',
  'affected',
  'affectedTotal',
] as const satisfies readonly KeysOf<ApiWebhooksAccessModel>[];
