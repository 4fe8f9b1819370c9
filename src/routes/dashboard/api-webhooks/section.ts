// The section's own page: the API key, API access, the default agent and the webhook endpoint of one account.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { planAllowsApi } from '../../../domain/api-access.js';
import { disabledReasonWords } from '../../../views/format/notices.js';
import { timeOrNull } from '../../../views/format/time.js';
import type { PageData } from '../../../views/page-models.js';
import { CLIENT, type Account, type Place, type Routes } from './place.js';

const AGENTS_LISTED = 500;

/** A form's problem, shown next to the form of its section. */
export type Problem = NonNullable<PageData<'api-webhooks'>['problem']>;

/** Everything the section shows about `account`; `problem` goes next to the form it is about. */
async function settings(
  request: FastifyRequest,
  place: Place,
  account: Account,
  problem: Problem | null = null,
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
      createdAt: timeOrNull(key.createdAt),
      lastUsed: timeOrNull(key.lastUsedAt),
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
      disabledReason: disabledReasonWords(endpoint.disabledReason),
      updatedAt: timeOrNull(endpoint.updatedAt),
      pending: counts?.pending ?? 0,
      failed: counts?.failed ?? 0,
      held: counts?.held ?? 0,
      heldSince: timeOrNull(counts?.heldSince),
    },
    problem,
  };
}

/** The section's page again, with a form's problem next to that form. */
export async function showSettings(
  fastify: FastifyInstance,
  place: Place,
  reply: FastifyReply,
  account: Account,
  status: number,
  problem: Problem,
) {
  return reply.code(status).page('api-webhooks', await settings(reply.request, place, account, problem));
}

export function sectionRoutes(fastify: Routes, place: Place) {
  fastify.get(place.prefix, { schema: { hide: true } }, async (request, reply) => {
    const account = await place.account(request, reply);
    return reply.page('api-webhooks', await settings(request, place, account));
  });
}
