// The Agents list: the agents a person manages (an agency user: the agency's and its clients'; a client user: their
// client's), in use a page at a time by name, then the archived ones (at most a page's worth, the rest found with
// the name filter), each row with its settings in words and "Set as default"; "Name starts with" filters both.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { isAgencyScope } from '../../domain/tenancy.js';
import { canonicalZone } from '../../domain/time-zones.js';
import { AgentsQuery } from '../../../schemas/dashboard/lists.js';
import { attemptsWords, voicemailWords } from '../../views/format/agent.js';
import { POLICY_WORDS, windowWords } from '../../views/format/settings.js';
import { LIST_PAGE_SIZE, listAsked, namedList } from '../../views/pages/list-filter.js';
import { handoffWords } from '../../views/pages/agents.js';

export const AGENTS_PATH = '/dashboard/agents';
/** The Agents list's cells stay short: a longer voicemail message is cut there (the agent's page shows it whole). */
const LIST_MESSAGE_MAX = 60;

const agentsList: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get(
    '/agents',
    { config: { role: 'viewer' }, schema: { hide: true, querystring: AgentsQuery }, attachValidation: true },
    async (request, reply) => {
      const scope = request.scope;
      const asked = listAsked(request, AgentsQuery);
      // The agents in use a page at a time; the archived ones (the name filter's too) at most a page's worth.
      const [inUse, archived] = await Promise.all([
        request.scoped.listListedAgentsInScope(
          { archived: false, name: asked.name },
          { page: asked.page, size: LIST_PAGE_SIZE },
        ),
        request.scoped.listListedAgentsInScope({ archived: true, name: asked.name }, { page: 1, size: LIST_PAGE_SIZE }),
      ]);
      return reply.code(asked.problems.length ? 400 : 200).page('agents', {
        title: 'Agents',
        showAccount: isAgencyScope(scope),
        agents: inUse.rows.map((agent) => ({
          id: agent.id,
          name: agent.name,
          accountName: agent.account.name,
          accountKind: agent.account.kind,
          phone: agent.phoneNumber,
          timezone: canonicalZone(agent.timezone),
          windows: windowWords(agent.callingWindows),
          policy: POLICY_WORDS[agent.outsideWindowPolicy],
          calleeHours: agent.windowTimezone === 'recipient',
          attempts: attemptsWords(agent),
          voicemail: voicemailWords(agent, LIST_MESSAGE_MAX),
          handoff: handoffWords(agent),
          // An account's default agent is one of its own (migration 20261201160005): only its account's can be.
          isDefault: agent.defaultFor.some((a) => a.id === agent.accountId),
        })),
        archived: archived.rows.flatMap((agent) =>
          agent.archivedAt === null
            ? []
            : [
                {
                  id: agent.id,
                  name: agent.name,
                  accountName: agent.account.name,
                  accountKind: agent.account.kind,
                  archivedAt: request.times.time(agent.archivedAt),
                },
              ],
        ),
        archivedMore: archived.total - archived.rows.length,
        list: namedList(AGENTS_PATH, { one: 'agent', many: 'agents' }, asked, inUse, archived.total > archived.size),
      });
    },
  );
};

export default agentsList;
