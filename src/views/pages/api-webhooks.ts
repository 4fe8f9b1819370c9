// The api-webhooks page's model: what src/views/pages/api-webhooks.eta reads (with the partials it includes), and
// what builds it: the API key, API access, the default agent and the webhook endpoint of one account.
import type { FastifyRequest } from 'fastify';
import { planAllowsApi } from '../../domain/api-access.js';
import { disabledReasonWords } from '../format/notices.js';
import { CLIENT, type Account, type Place } from './api-webhooks-place.js';
import type { PageData } from '../page-models.js';
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

const AGENTS_LISTED = 500;

/** Everything the section shows about `account`; `problem` goes next to the form it is about. */
export async function settingsPage(
  request: FastifyRequest,
  place: Place,
  account: Account,
  problem: ApiWebhooksModel['problem'] = null,
): Promise<PageData<'api-webhooks'>> {
  const [access, key, agents, endpoint] = await Promise.all([
    request.scoped.apiAccess(account),
    request.scoped.activeKey(account),
    // The default agent is picked for new calls among the account's own agents: archived ones are not offered.
    request.scoped.ownAgents(account, AGENTS_LISTED, { onlyUsable: true }),
    request.scoped.endpoint(account),
  ]);
  const counts = endpoint ? await request.scoped.openDeliveries(endpoint) : null;
  const defaultAgent = await request.scoped.defaultAgent(access);
  const planAllows = planAllowsApi(access?.plan);
  const times = request.times;
  return {
    title: account.kind === 'client' ? `API & Webhooks · ${account.name}` : 'Settings → API & Webhooks',
    account: { id: account.id, name: account.name, kind: account.kind },
    base: place.base(account.id),
    // On a client's page (agency users): back to the client detail page it is a section of.
    clientHref: place === CLIENT ? `/dashboard/clients/${account.id}` : null,
    planAllows,
    planMessage: planAllows ? null : 'API access requires the agency plan',
    key: key && {
      prefix: key.displayPrefix,
      createdAt: times.orNull(key.createdAt),
      lastUsed: times.orNull(key.lastUsedAt),
    },
    access: {
      on: access?.accountSwitch ?? false,
      agencyOff: access?.agencySwitch === false,
      agencyName: access?.agencyName ?? null,
    },
    agents: agents.map((a) => ({
      id: a.id,
      label: a.accountId === account.id ? a.name : `${a.name} (${a.accountName})`,
      phone: a.phoneNumber,
    })),
    agentsCapped: agents.length >= AGENTS_LISTED,
    defaultAgentId: access?.defaultAgentId ?? null,
    // Accepted silently before: every trigger without agent_id then gets 400 "Agent has no phone number assigned".
    defaultAgentWithoutPhone: defaultAgent !== null && defaultAgent.phoneNumber === null,
    endpoint: endpoint && {
      url: endpoint.url,
      enabled: endpoint.enabled,
      disabledReason: disabledReasonWords(endpoint.disabledReason, times),
      updatedAt: times.orNull(endpoint.updatedAt),
      pending: counts?.pending ?? 0,
      failed: counts?.failed ?? 0,
      held: counts?.held ?? 0,
      heldSince: times.orNull(counts?.heldSince),
    },
    problem,
  };
}
