// The api-webhooks-webhook page's model: what src/views/pages/api-webhooks-webhook.eta reads (with the partials it includes).
import type { ApiWebhooksPlace, KeysOf, Problem } from './model-parts.js';

export type ApiWebhooksWebhookModel = ApiWebhooksPlace & {
  url: string;
  exists: boolean;
  /** The endpoint version the form is made for (epoch ms), or "none". */
  replaces: string;
  maxLength: number;
  problem: Problem;
};

/** The fields api-webhooks-webhook.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const API_WEBHOOKS_WEBHOOK_FIELDS = [
  'account',
  'base',
  'url',
  'exists',
  'replaces',
  'maxLength',
  'problem',
] as const satisfies readonly KeysOf<ApiWebhooksWebhookModel>[];
