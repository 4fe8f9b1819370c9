// The Agents and Clients pages of an agency of a thousand clients (each with an agent): a page of LIST_PAGE_SIZE rows
// in the order of the whole list (by name, then id), a line saying which rows out of how many, Previous and Next that
// keep the name filter, the last page with the rest (and for a page beyond it), a case-insensitive literal name
// prefix (% and _ as themselves), never another tenant's rows, a bad page or filter answered with a page that says
// so (never a 500), a page of bounded size, and the archived agents at most a page's worth. A small agency and a client
// user see the pages as before: no filter, no count, no pager.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createClient } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import { LIST_PAGE_SIZE } from '../../src/views/pages/list-filter.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { PlanCapture } from '../helpers/plan-capture.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';
import { insertAccountRows, insertAgentRows } from '../helpers/seed.js';

let app: App;
let agency: Tenant;
let visitor: Visitor;
let smallVisitor: Visitor;
let clientVisitor: Visitor;
let archiveVisitor: Visitor;
/** The clients (and their agents) whose names hold % and _; "otherBolt" is another agency's client "Bolt_1". */
const named = {} as Record<'bolt1' | 'boltX1' | 'boltPercent' | 'otherBolt', { accountId: string; agentId: string }>;

/** Numbered clients, each with an agent; with the three named ones, a thousand and one. */
const NUMBERED = 998;
const CLIENTS = NUMBERED + 3;
/** Every client's agent and the agency's own. */
const AGENTS = CLIENTS + 1;
const ARCHIVED = LIST_PAGE_SIZE + 5;

const inUseAgents = (body: string) => [...body.matchAll(/<code id="agent-id-([0-9a-f-]{36})">/g)].map((m) => m[1]!);
const archivedAgents = (body: string) =>
  [...body.matchAll(/<td class="id" data-label="Agent id"><code>([0-9a-f-]{36})<\/code>/g)].map((m) => m[1]!);
const clientRows = (body: string) =>
  [...body.matchAll(/<td class="primary" data-label="Name"><a href="\/dashboard\/clients\/([0-9a-f-]{36})">/g)].map(
    (m) => m[1]!,
  );
const countLine = (body: string) => /<p class="hint list-count">([^<]*)<\/p>/.exec(body)?.[1] ?? null;
const linkTo = (body: string, rel: 'prev' | 'next') =>
  new RegExp(`<a href="([^"]*)" rel="${rel}">`).exec(body)?.[1]?.replace(/&amp;/g, '&') ?? null;
const url = (path: string, params: Record<string, string>) => `${path}?${new URLSearchParams(params).toString()}`;

/** The ids of the list in the order the pages must follow: by name, then id, as the database sorts them. */
const agentOrder = async (agencyId: string) =>
  (
    await prismaOf(app).agent.findMany({
      where: { agencyId, archivedAt: null },
      orderBy: [{ name: 'asc' }, { id: 'asc' }],
      select: { id: true },
    })
  ).map((a) => a.id);
const clientOrder = async (agencyId: string) =>
  (
    await prismaOf(app).account.findMany({
      where: { agencyId, kind: 'client' },
      orderBy: [{ name: 'asc' }, { id: 'asc' }],
      select: { id: true },
    })
  ).map((a) => a.id);

/** Follows Next from `first` to the last page: each page's rows, in order. */
async function everyPage(first: string, rows: (body: string) => string[]) {
  const pages: { url: string; body: string; rows: string[] }[] = [];
  for (let at: string | null = first; at;) {
    const answer = await visitor.get(at);
    expect(answer.status, at).toBe(200);
    pages.push({ url: at, body: answer.body, rows: rows(answer.body) });
    at = linkTo(answer.body, 'next');
    expect(pages.length).toBeLessThanOrEqual(CLIENTS);
  }
  return pages;
}

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  const storage = app.storage;
  agency = await createTenant(app.storage);
  const numbered = Array.from({ length: NUMBERED }, (_, i) => ({
    id: randomUUID(),
    n: String(i + 1).padStart(4, '0'),
  }));
  await insertAccountRows(prismaOf(app), {
    data: numbered.map((c) => ({
      id: c.id,
      kind: 'client' as const,
      agencyId: agency.accountId,
      name: `Client ${c.n}`,
    })),
  });
  await insertAgentRows(prismaOf(app), {
    data: numbered.map((c) => ({
      accountId: c.id,
      agencyId: agency.accountId,
      name: `Agent ${c.n}`,
      phoneNumber: '+14155550100',
    })),
  });
  const other = await createTenant(app.storage);
  const specials = [
    ['bolt1', agency.accountId, 'Bolt_1', 'Sales_1'],
    ['boltX1', agency.accountId, 'BoltX1', 'SalesX1'],
    ['boltPercent', agency.accountId, 'Bolt%2', 'Sales%2'],
    ['otherBolt', other.accountId, 'Bolt_1', 'Sales_1'],
  ] as const;
  for (const [key, agencyId, client, agent] of specials) {
    const { id: accountId } = await createClient(storage, { agencyId, name: client, now: app.now() });
    const { id: agentId } = await createAgent(storage, {
      accountId,
      name: agent,
      phone: '+14155550100',
      now: app.now(),
    });
    named[key] = { accountId, agentId };
  }
  // Bolt_1's agent is its own default (an account's default agent is one of its own: never the agency's too).
  await setDefaultAgent(storage, named.bolt1.accountId, named.bolt1.agentId, undefined, app.now());

  // An agency with more archived agents than a page.
  const archive = await createTenant(app.storage);
  await insertAgentRows(prismaOf(app), {
    data: Array.from({ length: ARCHIVED }, (_, i) => ({
      accountId: archive.accountId,
      agencyId: archive.accountId,
      name: `Old ${String(i + 1).padStart(2, '0')}`,
      archivedAt: new Date(),
    })),
  });

  await createUserWithPassword(app.storage, agency.accountId, 'agency@paged.example');
  await createUserWithPassword(app.storage, other.accountId, 'small@paged.example');
  await createUserWithPassword(app.storage, named.bolt1.accountId, 'client@paged.example');
  await createUserWithPassword(app.storage, archive.accountId, 'archive@paged.example');
  const signedIn = async (email: string, ip: string) => {
    const v = new Visitor(app);
    v.ip = ip;
    expect((await v.signIn(email)).status).toBe(303);
    return v;
  };
  visitor = await signedIn('agency@paged.example', '10.8.0.1');
  smallVisitor = await signedIn('small@paged.example', '10.8.0.2');
  clientVisitor = await signedIn('client@paged.example', '10.8.0.3');
  archiveVisitor = await signedIn('archive@paged.example', '10.8.0.4');
}, 120_000);

describe('the Agents page of an agency with a thousand clients', () => {
  it('shows the first page: exactly a page of agents, which of how many, a Next link, and a bounded size', async () => {
    const answer = await visitor.get('/dashboard/agents');
    expect(answer.status).toBe(200);
    const order = await agentOrder(agency.accountId);
    expect(order).toHaveLength(AGENTS);
    expect(inUseAgents(answer.body)).toEqual(order.slice(0, LIST_PAGE_SIZE));
    expect(countLine(answer.body)).toBe(`Agents 1–${LIST_PAGE_SIZE} of 1,002`);
    expect(linkTo(answer.body, 'prev')).toBeNull();
    expect(linkTo(answer.body, 'next')).toBe('/dashboard/agents?page=2');
    expect(answer.body).toContain('<input type="text" name="name" value=""');
    expect(Buffer.byteLength(answer.body)).toBeLessThan(100_000);
  });

  it('pages through every agent of the agency and its clients, in order, to a last page with the rest', async () => {
    const pages = await everyPage('/dashboard/agents', inUseAgents);
    const last = Math.ceil(AGENTS / LIST_PAGE_SIZE);
    expect(pages).toHaveLength(last);
    expect(pages.flatMap((p) => p.rows)).toEqual(await agentOrder(agency.accountId));
    expect(pages[1]!.url).toBe('/dashboard/agents?page=2');
    expect(countLine(pages[1]!.body)).toBe(`Agents 51–100 of 1,002`);
    expect(linkTo(pages[1]!.body, 'prev')).toBe('/dashboard/agents');
    const end = pages[last - 1]!;
    expect(end.rows).toHaveLength(AGENTS - (last - 1) * LIST_PAGE_SIZE);
    expect(countLine(end.body)).toBe(`Agents 1,001–1,002 of 1,002`);
    expect(linkTo(end.body, 'prev')).toBe(`/dashboard/agents?page=${last - 1}`);
    // Another agency's agent of the same name is on none of them.
    expect(pages.flatMap((p) => p.rows)).not.toContain(named.otherBolt.agentId);
    // A page beyond the last shows the last.
    const beyond = await visitor.get('/dashboard/agents?page=999999');
    expect(beyond.status).toBe(200);
    expect(inUseAgents(beyond.body)).toEqual(end.rows);
  });

  it('filters by the start of a name in any case, and Previous and Next keep the filter', async () => {
    const first = await visitor.get(url('/dashboard/agents', { name: ' agent 00 ' }));
    expect(first.status).toBe(200);
    expect(inUseAgents(first.body)).toHaveLength(LIST_PAGE_SIZE);
    expect(countLine(first.body)).toBe(html('Agents 1–50 of 99 whose name starts with "agent 00"'));
    expect(first.body).toContain('<input type="text" name="name" value="agent 00"');
    const next = linkTo(first.body, 'next');
    expect(next).toBe('/dashboard/agents?name=agent+00&page=2');
    const second = await visitor.get(next!);
    expect(inUseAgents(second.body)).toHaveLength(99 - LIST_PAGE_SIZE);
    expect(countLine(second.body)).toBe(html('Agents 51–99 of 99 whose name starts with "agent 00"'));
    expect(linkTo(second.body, 'next')).toBeNull();
    expect(linkTo(second.body, 'prev')).toBe('/dashboard/agents?name=agent+00');
    const shown = [...inUseAgents(first.body), ...inUseAgents(second.body)];
    const agents = await prismaOf(app).agent.findMany({ where: { id: { in: shown } }, select: { name: true } });
    expect(agents.every((a) => /^Agent 00\d\d$/.test(a.name))).toBe(true);
  });

  it('takes % and _ in the filter as themselves, and never finds another tenant’s agent', async () => {
    const underscore = await visitor.get(url('/dashboard/agents', { name: 'sales_' }));
    expect(inUseAgents(underscore.body)).toEqual([named.bolt1.agentId]);
    expect(countLine(underscore.body)).toBe(html('1 agent whose name starts with "sales_"'));
    expect(inUseAgents((await visitor.get(url('/dashboard/agents', { name: 'SALES%' }))).body)).toEqual([
      named.boltPercent.agentId,
    ]);
    const none = await visitor.get(url('/dashboard/agents', { name: 's%1' }));
    expect(none.status).toBe(200);
    expect(inUseAgents(none.body)).toEqual([]);
    expect(none.body).toContain('No agent in use has a name that starts with "s%1".');
    expect(none.body).toContain('<a class="button secondary" href="/dashboard/agents">Show all agents</a>');
  });

  it('says an agent is its account’s default, to the agency’s users and the client’s alike', async () => {
    const row = (body: string, id: string) => new RegExp(`<code id="agent-id-${id}">[^]*?</tr>`).exec(body)?.[0] ?? '';
    const agencyRow = row((await visitor.get(url('/dashboard/agents', { name: 'sales_' }))).body, named.bolt1.agentId);
    expect(agencyRow).toContain('<strong class="default">Default</strong>');
    expect(agencyRow).not.toContain('default of');
    const clientRow = row((await clientVisitor.get('/dashboard/agents')).body, named.bolt1.agentId);
    expect(clientRow).toContain('<strong class="default">Default</strong>');
    expect(clientRow).not.toContain('default of');
  });

  it('answers a bad page number or filter with the first page and what was wrong, never an error page', async () => {
    const pages = ['0', '-1', 'abc', '1.5', '1e3', '99999999999999999999', '', ' ', '\u0000'];
    const asked = [
      ...pages.map((page) => url('/dashboard/agents', { page })),
      '/dashboard/agents?page=1&page=2',
      '/dashboard/agents?page[]=2',
      url('/dashboard/agents', { name: 'x'.repeat(201) }),
      url('/dashboard/agents', { name: 'a\u0000' }),
      '/dashboard/agents?name=a&name=b',
    ];
    for (const at of asked) {
      const answer = await visitor.get(at);
      expect([200, 400], at).toContain(answer.status);
      expect(inUseAgents(answer.body), at).toEqual((await agentOrder(agency.accountId)).slice(0, LIST_PAGE_SIZE));
      if (answer.status === 400) expect(answer.body, at).toContain('<p class="notice error" role="alert">');
    }
    const page = await visitor.get('/dashboard/agents?page=abc');
    expect(page.status).toBe(400);
    expect(page.body).toContain(
      'The page must be a whole number from 1, of at most 6 digits: the first page is shown.',
    );
    const name = await visitor.get('/dashboard/agents?name=a&name=b');
    expect(name.status).toBe(400);
    expect(name.body).toContain(html('"Name starts with" takes one text of at most 200 characters'));
  });

  it('reads a page of agents from the database, never every one', async () => {
    const capture = new PlanCapture();
    capture.start();
    try {
      await capture.during('agents', async () =>
        expect((await visitor.get('/dashboard/agents?page=3')).status).toBe(200),
      );
    } finally {
      capture.stop();
    }
    const reads = capture.statements.filter(
      (s) => /\bFROM\s+"public"\."agents"/i.test(s.text) && !/\bCOUNT\s*\(/i.test(s.text),
    );
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(read.text).toMatch(/\bLIMIT\b/i);
  });
});

describe('the Archived section', () => {
  it('shows at most a page of archived agents, says how many more, and the name filter finds them', async () => {
    const answer = await archiveVisitor.get('/dashboard/agents');
    expect(answer.status).toBe(200);
    expect(archivedAgents(answer.body)).toHaveLength(LIST_PAGE_SIZE);
    expect(answer.body).toContain(
      '5 more archived agents are not shown: type the start of a name in "Name starts with" to find one.',
    );
    expect(answer.body).toContain('<input type="text" name="name" value=""');
    // The agents in use fit on one page: no count, no pager.
    expect(countLine(answer.body)).toBeNull();
    expect(answer.body).not.toContain('class="pager"');

    const found = await archiveVisitor.get(url('/dashboard/agents', { name: 'old 5' }));
    expect(archivedAgents(found.body)).toHaveLength(ARCHIVED - 49);
    expect(found.body).not.toContain('more archived');
    expect(found.body).toContain('No agent in use has a name that starts with "old 5".');
  });
});

describe('the Clients page of an agency with a thousand clients', () => {
  it('shows the first page: exactly a page of clients, which of how many, a Next link, and a bounded size', async () => {
    const answer = await visitor.get('/dashboard/clients');
    expect(answer.status).toBe(200);
    expect(clientRows(answer.body)).toEqual((await clientOrder(agency.accountId)).slice(0, LIST_PAGE_SIZE));
    expect(countLine(answer.body)).toBe(`Clients 1–${LIST_PAGE_SIZE} of 1,001`);
    expect(linkTo(answer.body, 'next')).toBe('/dashboard/clients?page=2');
    expect(Buffer.byteLength(answer.body)).toBeLessThan(100_000);
    // The create form is still there, under the list.
    expect(answer.body).toContain('<h2 id="create-client">Create a client</h2>');
  });

  it('pages through every client, in order, to a last page with the rest; beyond it, the last page', async () => {
    const pages = await everyPage('/dashboard/clients', clientRows);
    const last = Math.ceil(CLIENTS / LIST_PAGE_SIZE);
    expect(pages).toHaveLength(last);
    expect(pages.flatMap((p) => p.rows)).toEqual(await clientOrder(agency.accountId));
    expect(pages.flatMap((p) => p.rows)).not.toContain(named.otherBolt.accountId);
    const end = pages[last - 1]!;
    expect(end.rows).toHaveLength(CLIENTS - (last - 1) * LIST_PAGE_SIZE);
    expect(countLine(end.body)).toBe('Clients 1,001 of 1,001');
    expect(linkTo(end.body, 'prev')).toBe(`/dashboard/clients?page=${last - 1}`);
    const beyond = await visitor.get('/dashboard/clients?page=500');
    expect(beyond.status).toBe(200);
    expect(clientRows(beyond.body)).toEqual(end.rows);
  });

  it('filters by a literal, case-insensitive name prefix, kept by Previous and Next; never another tenant’s', async () => {
    const first = await visitor.get(url('/dashboard/clients', { name: 'CLIENT 00' }));
    expect(clientRows(first.body)).toHaveLength(LIST_PAGE_SIZE);
    expect(countLine(first.body)).toBe(html('Clients 1–50 of 99 whose name starts with "CLIENT 00"'));
    const second = await visitor.get(linkTo(first.body, 'next')!);
    expect(clientRows(second.body)).toHaveLength(99 - LIST_PAGE_SIZE);
    expect(linkTo(second.body, 'prev')).toBe('/dashboard/clients?name=CLIENT+00');

    expect(clientRows((await visitor.get(url('/dashboard/clients', { name: 'bolt_' }))).body)).toEqual([
      named.bolt1.accountId,
    ]);
    expect(clientRows((await visitor.get(url('/dashboard/clients', { name: 'bolt%' }))).body)).toEqual([
      named.boltPercent.accountId,
    ]);
    const none = await visitor.get(url('/dashboard/clients', { name: 'b%1' }));
    expect(none.status).toBe(200);
    expect(clientRows(none.body)).toEqual([]);
    expect(none.body).toContain('No client\'s name starts with "b%1".');
  });

  it('answers a bad page number with the first page and what was wrong, never an error page', async () => {
    for (const at of [
      '/dashboard/clients?page=0',
      '/dashboard/clients?page=x&page=y',
      '/dashboard/clients?page=1e99',
    ]) {
      const answer = await visitor.get(at);
      expect(answer.status, at).toBe(400);
      expect(answer.body, at).toContain('the first page is shown.');
      expect(clientRows(answer.body), at).toHaveLength(LIST_PAGE_SIZE);
    }
  });
});

describe('a small agency and a client user', () => {
  it('see every row on one page, without a filter, a count or a pager', async () => {
    for (const [who, path, rows] of [
      [smallVisitor, '/dashboard/agents', 2],
      [smallVisitor, '/dashboard/clients', 1],
      [clientVisitor, '/dashboard/agents', 1],
    ] as const) {
      const answer = await who.get(path);
      expect(answer.status, path).toBe(200);
      expect((path.endsWith('agents') ? inUseAgents : clientRows)(answer.body), path).toHaveLength(rows);
      expect(answer.body, path).not.toContain('Name starts with');
      expect(countLine(answer.body), path).toBeNull();
      expect(answer.body, path).not.toContain('class="pager"');
    }
    // The other agency's Bolt_1 is its own.
    expect(clientRows((await smallVisitor.get('/dashboard/clients')).body)).toEqual([named.otherBolt.accountId]);
  });
});
