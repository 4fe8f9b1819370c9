// The dashboard of an agency with more clients and agents than a menu lists (FILTER_MENU_MAX). The Calls list: the
// Agent and Client filters are names to type, chosen by the server (a whole name first, else the only one that
// starts so, else a choice of links); the page reads and shows only the accounts and agents its filters and rows
// name; another tenant's clients and agents are never found; an id from a link stands while the name beside it
// still fits. The Overview: the agency and the OVERVIEW_CLIENTS_MAX clients with the most to see.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createClient } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import { FILTER_MENU_MAX } from '../../src/views/pages/calls-filters.js';
import { OVERVIEW_CLIENTS_MAX } from '../../src/routes/dashboard/overview.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { PlanCapture } from '../helpers/plan-capture.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';
import { insertCalls, deleteEndpoints, insertEndpointRow, insertEndpointRows } from '../helpers/seed.js';

let app: App;
let agency: Tenant;
let visitor: Visitor;
let otherVisitor: Visitor;
/** The named clients, each with an agent called "Sales" and one call; "Other" is another agency's. */
const clients = {} as Record<'acme' | 'acmeTwo' | 'boltUnderscore' | 'boltX' | 'other', Tenant & { call: string }>;

const CALL_LINK = /href="\/dashboard\/calls\/([0-9a-f-]{36})"/g;
const listed = (body: string) => [...body.matchAll(CALL_LINK)].map((m) => m[1]!).sort();
const choices = (body: string) =>
  [
    ...(/<nav class="choices"[^]*?<\/nav>/.exec(body)?.[0] ?? '').matchAll(/<li><a href="([^"]+)">([^<]+)<\/a><\/li>/g),
  ].map((m) => ({
    href: m[1]!.replace(/&amp;/g, '&'),
    label: m[2]!,
  }));
const query = (params: Record<string, string>) => `/dashboard/calls?${new URLSearchParams(params).toString()}`;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  const storage = app.storage;
  agency = await createTenant(app.storage);
  // More clients (each with an agent) than the menus list, none with a call.
  for (let i = 0; i <= FILTER_MENU_MAX; i++) {
    const { id } = await createClient(storage, { agencyId: agency.accountId, name: `Filler ${i}`, now: app.now() });
    await createAgent(storage, { accountId: id, name: `Filler agent ${i}`, phone: '+14155550100', now: app.now() });
  }
  const other = await createTenant(app.storage);
  const named = { acme: 'Acme', acmeTwo: 'Acme Two', boltUnderscore: 'Bolt_1', boltX: 'BoltX1', other: 'Acme' };
  for (const [key, name] of Object.entries(named) as [keyof typeof clients, string][]) {
    const tenant = await createClientTenant(app.storage, key === 'other' ? other.accountId : agency.accountId, {
      name,
      agentName: 'Sales',
    });
    const [call] = await insertCalls(prismaOf(app), {
      accountId: tenant.accountId,
      agentId: tenant.agentId,
      count: 1,
      createdAt: new Date(Date.now() - 60_000 * Object.keys(clients).length - 60_000),
    });
    clients[key] = { ...tenant, call: call! };
  }
  await createUserWithPassword(app.storage, agency.accountId, 'agency@many.example');
  await createUserWithPassword(app.storage, other.accountId, 'other@many.example');
  visitor = new Visitor(app);
  expect((await visitor.signIn('agency@many.example')).status).toBe(303);
  otherVisitor = new Visitor(app);
  otherVisitor.ip = '10.9.0.2';
  expect((await otherVisitor.signIn('other@many.example')).status).toBe(303);
}, 120_000);

const ofAgency = ['acme', 'acmeTwo', 'boltUnderscore', 'boltX'] as const;
const callsOf = (...keys: (keyof typeof clients)[]) => keys.map((k) => clients[k].call).sort();

describe('the Calls list of an agency with more clients and agents than a menu lists', () => {
  it('asks for names instead of listing every client and agent, and shows only those of its rows', async () => {
    const answer = await visitor.get('/dashboard/calls');
    expect(answer.status).toBe(200);
    expect(answer.body).not.toContain('<select name="client">');
    expect(answer.body).not.toContain('<select name="agent">');
    expect(answer.body).toContain('<input type="text" name="client_name" value=""');
    expect(answer.body).toContain('<input type="text" name="agent_name" value=""');
    // No client or agent without a call on the page is named in it.
    expect(answer.body).not.toContain('Filler');
    expect(listed(answer.body)).toEqual(callsOf(...ofAgency));
    expect(answer.body).toContain('<td data-label="Client">Acme Two</td>');
    expect(answer.body).toContain('<td data-label="Agent">Sales</td>');
  });

  it('a client user of a small account still chooses from menus', async () => {
    expect((await otherVisitor.get('/dashboard/calls')).body).toContain('<select name="client">');
  });

  it('chooses the client whose whole name was typed, in any case, before those whose name starts with it', async () => {
    const answer = await visitor.get(query({ client_name: 'acme' }));
    expect(answer.status).toBe(200);
    expect(listed(answer.body)).toEqual(callsOf('acme'));
    // The form keeps the choice: the name as the client has it, and its id beside it.
    expect(answer.body).toContain('<input type="text" name="client_name" value="Acme"');
    expect(answer.body).toContain(`<input type="hidden" name="client" value="${clients.acme.accountId}">`);
    expect(listed((await visitor.get(query({ client_name: 'ACME T' }))).body)).toEqual(callsOf('acmeTwo'));
  });

  it('takes % and _ in a name as themselves', async () => {
    expect(listed((await visitor.get(query({ client_name: 'bolt_' }))).body)).toEqual(callsOf('boltUnderscore'));
    const none = await visitor.get(query({ client_name: 'b%1' }));
    expect(none.status).toBe(400);
    expect(none.body).toContain(html('No client\'s name starts with "b%1".'));
  });

  it('offers the first 20 to choose from when a name fits more, each a link to its calls', async () => {
    const answer = await visitor.get(query({ client_name: 'fill', status: 'completed' }));
    expect(answer.status).toBe(400);
    expect(answer.body).toContain(
      html('More than 20 clients have a name that starts with "fill": choose one below, or type more of the name.'),
    );
    expect(listed(answer.body)).toEqual([]);
    const offered = choices(answer.body);
    expect(offered).toHaveLength(20);
    expect(offered.every((c) => c.label.startsWith('Filler '))).toBe(true);
    // A choice keeps the other filters and names the client by id.
    const chosen = await visitor.get(offered[0]!.href);
    expect(chosen.status).toBe(200);
    expect(offered[0]!.href).toContain('status=completed');
    expect(chosen.body).toContain(`<input type="text" name="client_name" value="${offered[0]!.label}"`);
    expect(chosen.body).toContain('No calls match these filters.');

    const two = await visitor.get(query({ client_name: 'acm' }));
    expect(two.body).toContain(html('2 clients have a name that starts with "acm"'));
    expect(choices(two.body).map((c) => c.label)).toEqual(['Acme', 'Acme Two']);
  });

  it('never finds another tenant’s client or agent, by name or by id', async () => {
    const byName = await visitor.get(query({ client_name: 'Acme' }));
    expect(listed(byName.body)).not.toContain(clients.other.call);
    const byId: Record<string, string>[] = [
      { client: clients.other.accountId },
      { client: clients.other.accountId, client_name: 'Acme' },
    ];
    for (const params of byId) {
      const answer = await visitor.get(query(params));
      expect(answer.status).toBe(400);
      expect(answer.body).toContain('Unknown client');
      expect(listed(answer.body)).toEqual([]);
    }
    const agent = await visitor.get(query({ agent: clients.other.agentId }));
    expect(agent.status).toBe(400);
    expect(agent.body).toContain('Unknown agent');
    // Four agents of the agency are called Sales; the other agency's is not among them.
    const sales = await visitor.get(query({ agent_name: 'sales' }));
    expect(sales.status).toBe(400);
    // In the database's collation's order (punctuation counts in some, not in others).
    expect(
      choices(sales.body)
        .map((c) => c.label)
        .sort(),
    ).toEqual(['Sales (Acme)', 'Sales (Acme Two)', 'Sales (Bolt_1)', 'Sales (BoltX1)'].sort());
  });

  it('looks for the agent among the chosen client’s', async () => {
    const answer = await visitor.get(query({ client_name: 'Acme Two', agent_name: 'Sales' }));
    expect(answer.status).toBe(200);
    expect(listed(answer.body)).toEqual(callsOf('acmeTwo'));
    expect(answer.body).toContain(`<input type="hidden" name="agent" value="${clients.acmeTwo.agentId}">`);
  });

  it('keeps an id while the name beside it fits, follows a name typed over it, and drops it when the name is cleared', async () => {
    const linked = await visitor.get(query({ client: clients.acme.accountId }));
    expect(listed(linked.body)).toEqual(callsOf('acme'));
    expect(linked.body).toContain('<input type="text" name="client_name" value="Acme"');
    const kept = await visitor.get(query({ client: clients.acme.accountId, client_name: 'ACME' }));
    expect(listed(kept.body)).toEqual(callsOf('acme'));
    const retyped = await visitor.get(query({ client: clients.acme.accountId, client_name: 'BoltX' }));
    expect(listed(retyped.body)).toEqual(callsOf('boltX'));
    const cleared = await visitor.get(query({ client: clients.acme.accountId, client_name: ' ' }));
    expect(cleared.status).toBe(200);
    expect(listed(cleared.body)).toEqual(callsOf(...ofAgency));
  });
});

describe('the Overview of an agency with more clients than it lists', () => {
  it('lists the agency and the clients with the most to see, and says how many more there are', async () => {
    const answer = await visitor.get('/dashboard');
    expect(answer.status).toBe(200);
    const table = /<table class="rows overview" id="calls-now">[^]*?<\/table>/.exec(answer.body)![0];
    const accounts = [...table.matchAll(/<th scope="row" data-label="Account">([^<]+)</g)].map((m) => m[1]!.trim());
    expect(accounts).toHaveLength(1 + OVERVIEW_CLIENTS_MAX);
    expect(accounts[0]).toBe('Test Agency');
    // The four clients with a call completed today come before those with nothing to see, which follow by name.
    expect(accounts.slice(1, 5).sort()).toEqual(['Acme', 'Acme Two', 'BoltX1', 'Bolt_1'].sort());
    expect(accounts.slice(5).every((name) => name.startsWith('Filler '))).toBe(true);
    const clientCount = FILTER_MENU_MAX + 1 + ofAgency.length;
    expect(answer.body).toContain(
      `${clientCount - OVERVIEW_CLIENTS_MAX} more are not shown: see <a href="/dashboard/calls">Calls</a>`,
    );
  });

  it('reads every client in the same few statements, however many have a webhook endpoint', async () => {
    const sent = async () => {
      const capture = new PlanCapture();
      capture.start();
      try {
        await capture.during('overview', async () => expect((await visitor.get('/dashboard')).status).toBe(200));
      } finally {
        capture.stop();
      }
      return capture.statements.length;
    };
    const before = await sent();
    const fillers = await prismaOf(app).account.findMany({
      where: { agencyId: agency.accountId, name: { startsWith: 'Filler' } },
      select: { id: true },
      take: 40,
    });
    await insertEndpointRows(prismaOf(app), {
      data: fillers.map((f) => ({
        accountId: f.id,
        url: 'https://hooks.example.test/in',
        secret: 'whsec_' + 'b'.repeat(32),
      })),
    });
    // Two per endpoint before: 80 more.
    expect(await sent()).toBe(before);
  });

  it('puts a client whose endpoint is disabled first, with its warning', async () => {
    const filler = await prismaOf(app).account.findFirstOrThrow({ where: { name: 'Filler 99' }, select: { id: true } });
    await deleteEndpoints(prismaOf(app), { where: { accountId: filler.id } });
    await insertEndpointRow(prismaOf(app), {
      data: {
        accountId: filler.id,
        url: 'https://hooks.example.test/in',
        secret: 'whsec_' + 'a'.repeat(32),
        enabled: false,
        disabledReason: 'manual',
      },
    });
    const answer = await visitor.get('/dashboard');
    const table = /<table class="rows overview" id="calls-now">[^]*?<\/table>/.exec(answer.body)![0];
    const accounts = [...table.matchAll(/<th scope="row" data-label="Account">([^<]+)</g)].map((m) => m[1]!.trim());
    expect(accounts[1]).toBe('Filler 99');
    expect(answer.body).toContain('The webhook endpoint of Filler 99 is disabled');
  });
});
