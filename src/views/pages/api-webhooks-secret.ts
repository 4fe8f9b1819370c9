// The api-webhooks-secret page's model: what src/views/pages/api-webhooks-secret.eta reads (with the partials it includes).
import type { ApiWebhooksPlace, KeysOf } from './model-parts.js';

/** A new key or signing secret, shown once; `value` null: that form was sent before (`already` says so). */
export type ApiWebhooksSecretModel = ApiWebhooksPlace &
  (
    | { what: 'key'; value: string; replaced: boolean; already: null }
    | { what: 'secret'; value: string; url: string; already: null }
    | { what: 'key' | 'secret'; value: null; already: string }
  );

/** The fields api-webhooks-secret.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const API_WEBHOOKS_SECRET_FIELDS = [
  'account',
  'base',
  'what',
  'value',
  'replaced',
  'url',
  'already',
] as const satisfies readonly KeysOf<ApiWebhooksSecretModel>[];
