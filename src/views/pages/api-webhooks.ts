// The api-webhooks page's model: what src/views/pages/api-webhooks.eta reads (with the partials it includes).
import type { ApiWebhooksPlace, EndpointState, KeysOf } from './model-parts.js';

export type ApiWebhooksModel = ApiWebhooksPlace & {
  clientHref: string | null;
  planAllows: boolean;
  planMessage: string | null;
  key: { prefix: string; createdAt: string | null; lastUsed: string | null } | null;
  access: { on: boolean; agencyOff: boolean; agencyName: string | null };
  agents: { id: string; label: string; phone: string | null }[];
  agentsCapped: boolean;
  defaultAgentId: string | null;
  defaultAgentWithoutPhone: boolean;
  endpoint:
    | (EndpointState & {
        updatedAt: string | null;
        pending: number;
        failed: number;
        held: number;
        heldSince: string | null;
      })
    | null;
  /** A form's problem, shown next to the form of that section. */
  problem: { section: 'access' | 'agent' | 'webhook'; text: string } | null;
};

/** The fields api-webhooks.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const API_WEBHOOKS_FIELDS = [
  'account',
  'base',
  'clientHref',
  'planAllows',
  'planMessage',
  'key',
  'access',
  'agents',
  'agentsCapped',
  'defaultAgentId',
  'defaultAgentWithoutPhone',
  'endpoint',
  'problem',
] as const satisfies readonly KeysOf<ApiWebhooksModel>[];
