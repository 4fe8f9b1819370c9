// Clients (agency users only): the agency's clients a page at a time by name ("Name starts with" filters them),
// "Create client", and each client's detail page with its plan, a link to its API & Webhooks section
// (/dashboard/clients/:id/api-webhooks) and its users (invite, disable).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { CLIENT_NAME_MAX_LENGTH, createClient } from '../../admin/accounts.js';
import { apiAccessOn, switchedOffBy } from '../../domain/api-access.js';
import { NAVIGATION } from '../../views/navigation.js';
import { ClientsQuery } from '../../../schemas/dashboard/lists.js';
import { ClientParams, CreateClientForm } from '../../../schemas/dashboard/people.js';
import { FIRST_PAGE, LIST_PAGE_SIZE, listAsked, namedList, type ListAsked } from '../../views/pages/list-filter.js';
import type { PageData } from '../../views/page-models.js';
import { managesPeopleOf, peopleOf, ROLES } from '../../views/pages/users-table.js';

/**
 * A page about the client (its calls, the agents): linked when the page exists, else "coming" like the navigation.
 * `query` narrows the page to this client where the page has such a filter.
 */
function clientSection(navLabel: string, label: string, query: string) {
  const href = NAVIGATION.find((item) => item.label === navLabel)?.href;
  return href ? { label, href: `${href}${query}` } : { label: navLabel, href: null };
}

/** A client's API access as it works (src/domain/api-access.ts): its own switch, unless the agency's is off. */
function accessWords(own: boolean, agencySwitch: boolean | null): string {
  const offBy = switchedOffBy(own, agencySwitch);
  if (offBy === null) return 'on';
  if (offBy === 'account') return 'off';
  return offBy === 'agency'
    ? "off: the agency's API access is off, which overrides this client's switch (on)"
    : "off (this client's switch, and the agency's too)";
}

const LIST_PATH = '/dashboard/clients';

const clients: FastifyPluginAsyncTypebox = async (fastify) => {
  // `/clients/:id`: a client of the viewer's agency; the agency's own id is no client page (404, like any other).
  fastify.resolveManaged('client', 'id');

  const listPage = async (
    request: FastifyRequest,
    asked: ListAsked,
    form: { name: string; problem: string | null },
  ): Promise<PageData<'clients'>> => {
    const [page, agency] = await Promise.all([
      request.scoped.listClientsInScope(asked.name, {
        page: asked.page,
        size: LIST_PAGE_SIZE,
      }),
      request.scoped.apiAccess({ id: request.scope.accountId }),
    ]);
    const agencyOff = agency ? !apiAccessOn(agency.accountSwitch, agency.agencySwitch) : false;
    return {
      title: 'Clients',
      agencyOff,
      clients: page.rows.map((c) => ({
        href: `/dashboard/clients/${c.id}`,
        name: c.name,
        created: request.times.time(c.createdAt),
        access: accessWords(c.apiAccessEnabled, agency?.accountSwitch ?? null),
        keyPrefix: c.keyPrefix,
        webhookSet: c.webhookSet,
        activeUsers: c.activeUsers,
      })),
      list: namedList(LIST_PATH, { one: 'client', many: 'clients' }, asked, page),
      form: { ...form, maxLength: CLIENT_NAME_MAX_LENGTH },
    };
  };

  fastify.get(
    '/clients',
    { config: { role: 'viewer' }, schema: { hide: true, querystring: ClientsQuery }, attachValidation: true },
    async (request, reply) => {
      const asked = listAsked(request, ClientsQuery);
      return reply
        .code(asked.problems.length ? 400 : 200)
        .page('clients', await listPage(request, asked, { name: '', problem: null }));
    },
  );

  fastify.post(
    '/clients',
    {
      schema: { hide: true, body: CreateClientForm },
      attachValidation: true,
      config: {
        role: 'admin',
        // The list again with the name typed (none when the form was not valid) and the problem beside it.
        formFailure: async (request, reply, { message, invalid }) => {
          const name = invalid ? '' : (request.body as CreateClientForm).name;
          return reply.code(400).page('clients', await listPage(request, FIRST_PAGE, { name, problem: message }));
        },
      },
    },
    async (request, reply) => {
      const client = await request.admin.run(
        createClient,
        { agencyId: request.user.accountId, name: request.body.name, now: request.admin.now() },
        request.admin.actor,
      );
      return reply.seeOther(`/dashboard/clients/${client.id}`, {
        kind: 'ok',
        text: `The client ${request.body.name.trim()} is created.`,
      });
    },
  );

  fastify.get(
    '/clients/:id',
    { config: { role: 'viewer' }, schema: { hide: true, params: ClientParams } },
    async (request, reply) => {
      const client = await request.scoped.clientSummary(request.managed('client'));
      if (!client) throw fastify.httpErrors.notFound();
      const access = await request.scoped.apiAccess(client);
      return reply.page('client', {
        title: `Client: ${client.name}`,
        client: {
          name: client.name,
          agencyName: client.agencyName,
          plan: client.plan,
          created: request.times.time(client.createdAt),
          access: accessWords(client.apiAccessEnabled, access?.agencySwitch ?? null),
          keyPrefix: client.keyPrefix,
          webhookSet: client.webhookSet,
        },
        apiWebhooksHref: `/dashboard/clients/${client.id}/api-webhooks`,
        sections: [
          clientSection('Calls', "This client's calls", `?client=${encodeURIComponent(client.id)}`),
          clientSection('Agents', "Agents (the agency's and every client's)", ''),
          { label: "This client's do-not-call list", href: `/dashboard/clients/${client.id}/do-not-call` },
          { label: "This client's calling rules", href: `/dashboard/clients/${client.id}/calling-rules` },
          { label: "This client's carrier", href: `/dashboard/clients/${client.id}/carrier` },
        ],
        people: await peopleOf(request, [{ id: client.id, name: client.name }]),
        showAccount: false,
        canManage: managesPeopleOf(request.user, client.id),
        from: 'client',
        roles: ROLES,
        invite: {
          accounts: [{ id: client.id, name: client.name }],
          account: client.id,
          email: '',
          role: 'member',
          roles: ROLES,
          problem: null,
          mailEnabled: fastify.mailer !== null,
        },
      });
    },
  );
};

export default clients;
