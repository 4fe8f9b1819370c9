// Clients (agency users only): the agency's clients, "Create client", and each client's detail page with its plan,
// a link to its API & Webhooks section (/dashboard/clients/:id/api-webhooks) and its users (invite, disable).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CLIENT_NAME_MAX_LENGTH, createClient } from '../../admin/accounts.js';
import { AdminError } from '../../admin/errors.js';
import { managedAccount, requireAgencyUser, viewerOf } from '../../../plugins/dashboard/guards.js';
import { NAVIGATION } from '../../../plugins/dashboard/navigation.js';
import { findClientSummary, listClients } from '../../storage/accounts.js';
import { findApiAccessState } from '../../storage/keys.js';
import { ClientParams, CreateClientForm } from '../../../schemas/dashboard/people.js';
import { clientIp, formProblem } from './form-problem.js';
import { peopleOf, shownTime } from './users.js';

/**
 * A page about the client (its calls, the agents): linked when the page exists, else "coming" like the navigation.
 * `query` narrows the page to this client where the page has such a filter.
 */
function clientSection(navLabel: string, label: string, query: string) {
  const href = NAVIGATION.find((item) => item.label === navLabel)?.href;
  return href ? { label, href: `${href}${query}` } : { label: navLabel, href: null };
}

/** A client's API access as it works: its own switch, unless the agency's is off (which overrides it). */
function accessWords(own: boolean, agencyOff: boolean): string {
  if (!agencyOff) return own ? 'on' : 'off';
  return own
    ? "off: the agency's API access is off, which overrides this client's switch (on)"
    : "off (this client's switch, and the agency's too)";
}

export default async function clients(fastify: FastifyInstance) {
  const listPage = async (request: FastifyRequest, form: { name: string; problem: string | null }) => {
    const agencyId = viewerOf(request).accountId;
    const [rows, agency] = await Promise.all([
      listClients(fastify.prisma, agencyId),
      findApiAccessState(fastify.prisma, agencyId),
    ]);
    const agencyOff = agency?.accountSwitch === false;
    return {
      title: 'Clients',
      agencyOff,
      clients: rows.map((c) => ({
        ...c,
        access: accessWords(c.apiAccessEnabled, agencyOff),
        created: shownTime(c.createdAt),
        href: `/dashboard/clients/${c.id}`,
      })),
      form: { ...form, maxLength: CLIENT_NAME_MAX_LENGTH },
    };
  };

  fastify.get('/clients', { schema: { hide: true }, preHandler: requireAgencyUser }, async (request, reply) =>
    reply.page('clients', await listPage(request, { name: '', problem: null })),
  );

  fastify.post<{ Body: CreateClientForm }>(
    '/clients',
    { schema: { hide: true, body: CreateClientForm }, attachValidation: true, preHandler: requireAgencyUser },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const problem = formProblem(request);
      if (problem) return reply.code(400).page('clients', await listPage(request, { name: '', problem }));
      try {
        const client = await createClient(
          fastify.prisma,
          { agencyId: viewer.accountId, name: request.body.name, now: fastify.now() },
          { kind: 'user', userId: viewer.id, ip: clientIp(request) },
        );
        return reply.seeOther(`/dashboard/clients/${client.id}`, {
          kind: 'ok',
          text: `The client ${request.body.name.trim()} is created.`,
        });
      } catch (error) {
        if (error instanceof AdminError)
          return reply
            .code(400)
            .page('clients', await listPage(request, { name: request.body.name, problem: error.message }));
        throw error;
      }
    },
  );

  fastify.get<{ Params: ClientParams }>(
    '/clients/:id',
    { schema: { hide: true, params: ClientParams }, preHandler: requireAgencyUser },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const account = await managedAccount(request, reply, request.params.id);
      const client = account.kind === 'client' ? await findClientSummary(fastify.prisma, account.id) : null;
      if (!client) throw fastify.httpErrors.notFound();
      const access = await findApiAccessState(fastify.prisma, client.id);
      return reply.page('client', {
        title: `Client: ${client.name}`,
        client: {
          ...client,
          access: accessWords(client.apiAccessEnabled, access?.agencySwitch === false),
          created: shownTime(client.createdAt),
        },
        apiWebhooksHref: `/dashboard/clients/${client.id}/api-webhooks`,
        sections: [
          clientSection('Calls', "This client's calls", `?client=${encodeURIComponent(client.id)}`),
          clientSection('Agents', "Agents (the agency's and every client's)", ''),
        ],
        people: await peopleOf(fastify, viewer, [{ id: client.id, name: client.name }]),
        showAccount: false,
        canManage: true,
        from: 'client',
        invite: {
          accounts: [{ id: client.id, name: client.name }],
          account: client.id,
          email: '',
          problem: null,
          mailEnabled: fastify.mailer !== null,
        },
      });
    },
  );
}
