// The api-webhooks-key page's model: what src/views/pages/api-webhooks-key.eta reads (with the partials it includes).
import type { ApiWebhooksPlace, KeysOf, Problem } from './model-parts.js';

export type ApiWebhooksKeyModel = ApiWebhooksPlace & {
  key: { prefix: string; createdAt: string } | null;
  /** The key id the form is made for, or "none". */
  replaces: string;
  planMessage: string | null;
  problem: Problem;
};

/** The fields api-webhooks-key.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const API_WEBHOOKS_KEY_FIELDS = [
  'account',
  'base',
  'key',
  'replaces',
  'planMessage',
  'problem',
] as const satisfies readonly KeysOf<ApiWebhooksKeyModel>[];
