// The Clients pages: the list (the agency's own clients only, with API access, key, webhook and users), "Create
// client" (a name is required; audited with the user, as callctl's is with the operator), and the client detail page
// (plan inherited, link to its API & Webhooks, its users, invite from there; 404 for anything not the agency's client).
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient, setApiAccess } from '../../src/admin/accounts.js';
import { apiAccessOn } from '../../src/domain/api-access.js';
import type { App } from '../../src/app.js';
import { callctl } from '../helpers/cli.js';
import { NAVIGATION } from '../../src/views/navigation.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';
import { insertApiKeyRow, insertEndpointRow } from '../helpers/seed.js';

let app: App;
let databaseUrl: string;
let agencyId: string;
let otherClientId: string;
let ownerId: string;
let owner: Visitor;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp({ env: DASHBOARD_ENV }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Acme' }));
  const { id: otherAgency } = await createAgency(app.storage, { name: 'Other agency', plan: 'starter' });
  ({ id: otherClientId } = await createClient(app.storage, {
    agencyId: otherAgency,
    name: 'Not yours',
    now: app.now(),
  }));
  ownerId = await createUserWithPassword(app.storage, agencyId, 'owner@acme.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@acme.example')).status).toBe(303);
});

describe('clients pages', () => {
  it('refuses an empty name with a message and creates nothing', async () => {
    const accounts = await prismaOf(app).account.count();
    for (const name of ['', '   ', 'x'.repeat(201)]) {
      const res = await owner.submit('/dashboard/clients', '/dashboard/clients', { name });
      expect(res.status).toBe(400);
      expect(res.body).toMatch(/A client needs a name|at most 200 characters/);
      expect(res.body).toContain('action="/dashboard/clients"');
    }
    expect(await prismaOf(app).account.count()).toBe(accounts);
    expect(await prismaOf(app).auditEntry.count({ where: { action: 'client_created' } })).toBe(0);
  });

  it('creates a client (audited with the user and IP) and shows its detail page, the name escaped', async () => {
    const name = '<script>alert(1)</script> Beta';
    const res = await owner.submit('/dashboard/clients', '/dashboard/clients', { name: `  ${name} ` });
    expect(res.status).toBe(303);
    const id = /^\/dashboard\/clients\/([0-9a-f-]{36})$/.exec(res.location ?? '')?.[1];
    expect(id).toBeDefined();
    expect(await prismaOf(app).account.findUniqueOrThrow({ where: { id: id! } })).toMatchObject({
      kind: 'client',
      agencyId,
      name,
    });
    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({ where: { action: 'client_created' } });
    expect(entry).toMatchObject({ accountId: id, agencyId, actorKind: 'user', actorUserId: ownerId, ip: owner.ip });

    const page = await owner.get(res.location!);
    expect(page.status).toBe(200);
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; Beta');
    expect(page.body).not.toContain('<script>');
    expect(page.body).toContain('is created.');
    expect(page.body).toContain('agency (inherited from the agency)');
    expect(page.body).toContain(`href="/dashboard/clients/${id}/api-webhooks"`);
    // Calls and Agents: linked when those pages exist (the calls narrowed to this client), "coming" until then.
    for (const [nav, link] of [
      ['Calls', `/dashboard/calls?client=${id}`],
      ['Agents', '/dashboard/agents'],
    ] as const) {
      const exists = NAVIGATION.find((item) => item.label === nav)?.href !== undefined;
      expect(page.body.includes(`<a href="${link}">`), nav).toBe(exists);
      if (!exists) expect(page.body).toMatch(new RegExp(`${nav}[^<]* <small>\\(coming\\)</small>`));
    }
    // Its users, with the invite form for this client only.
    expect(page.body).toContain('No users yet.');
    expect(page.body).toContain(`<input type="hidden" name="account" value="${id}">`);
  });

  it("lists only the agency's clients, with API access, key prefix, webhook and active users", async () => {
    const { id } = await createClient(app.storage, { agencyId, name: 'Gamma', now: app.now() });
    await insertApiKeyRow(prismaOf(app), {
      data: { accountId: id, digest: new Uint8Array(randomBytes(32)), displayPrefix: 'svc_sk_Gamma' },
    });
    await insertEndpointRow(prismaOf(app), {
      data: { accountId: id, url: 'https://hooks.example.com/in', secret: 'whsec_x' },
    });
    await setApiAccess(app.storage, id, false, undefined, app.now());
    await createUserWithPassword(app.storage, id, 'one@gamma.example');
    const page = await owner.get('/dashboard/clients');
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('Not yours');
    const row = new RegExp(
      `<a href="/dashboard/clients/${id}">Gamma</a></td>\\s*<td[^>]*>[^<]+</td>\\s*<td[^>]*>off</td>\\s*<td[^>]*><code>svc_sk_Gamma…</code></td>\\s*<td[^>]*>set</td>\\s*<td[^>]*>1</td>`,
    );
    expect(page.body).toMatch(row);
    expect(page.body).toMatch(
      /Beta<\/a><\/td>\s*<td[^>]*>[^<]+<\/td>\s*<td[^>]*>on<\/td>\s*<td[^>]*>none<\/td>\s*<td[^>]*>not set<\/td>\s*<td[^>]*>0<\/td>/,
    );
  });

  it('invites from the client page to that client and links back to it', async () => {
    const { id } = await createClient(app.storage, { agencyId, name: 'Delta', now: app.now() });
    const res = await owner.submit(`/dashboard/clients/${id}`, '/dashboard/users/invite', {
      email: 'dee@delta.example',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatch(/\/dashboard\/set-password\/[A-Za-z0-9_-]{43}/);
    expect(res.body).toContain(`<a href="/dashboard/clients/${id}">Done</a>`);
    expect((await prismaOf(app).user.findFirstOrThrow({ where: { email: 'dee@delta.example' } })).accountId).toBe(id);
    expect((await owner.get(`/dashboard/clients/${id}`)).body).toContain('dee@delta.example');
  });

  it("answers 404 for another agency's client, the agency itself, an unknown id and a malformed one", async () => {
    for (const id of [otherClientId, agencyId, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await owner.get(`/dashboard/clients/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toContain('There is no such page.');
    }
  });

  it('links Clients in the navigation for agency users', async () => {
    expect((await owner.get('/dashboard')).body).toContain('<a href="/dashboard/clients">Clients</a>');
  });

  it('callctl client create writes the same audit entry, with the operator as actor', async () => {
    const run = await callctl(databaseUrl, [
      'client',
      'create',
      '--agency',
      agencyId,
      '--name',
      'Via callctl',
      '--json',
    ]);
    expect(run.code).toBe(0);
    const { id } = run.json<{ id: string }>();
    expect(
      await prismaOf(app).auditEntry.findFirstOrThrow({ where: { action: 'client_created', accountId: id } }),
    ).toMatchObject({ actorKind: 'operator', actorUserId: null });
  });

  it('shows API access as the rule of src/domain/api-access.ts decides it, on the list and each detail page', async () => {
    const clients = await Promise.all(
      [true, false].map(async (own) => {
        const { id } = await createClient(app.storage, {
          agencyId,
          name: `Switch ${own ? 'on' : 'off'}`,
          now: app.now(),
        });
        if (!own) await setApiAccess(app.storage, id, false, undefined, app.now());
        return { id, own };
      }),
    );
    try {
      for (const agencySwitch of [true, false]) {
        await setApiAccess(app.storage, agencyId, agencySwitch, undefined, app.now());
        const list = await owner.get('/dashboard/clients');
        expect(list.body.includes('whatever its own switch says')).toBe(!agencySwitch);
        for (const { id, own } of clients) {
          const shown = apiAccessOn(own, agencySwitch) ? 'on' : 'off';
          const cell = new RegExp(
            `href="/dashboard/clients/${id}">[^<]+</a></td>\\s*<td[^>]*>[^<]+</td>\\s*<td[^>]*>(on|off)\\b`,
          );
          expect(cell.exec(list.body)?.[1], `list, client ${own}, agency ${agencySwitch}`).toBe(shown);
          const detail = await owner.get(`/dashboard/clients/${id}`);
          expect(/<dt>API access<\/dt><dd>(on|off)\b/.exec(detail.body)?.[1], `detail, ${own}, ${agencySwitch}`).toBe(
            shown,
          );
        }
      }
    } finally {
      await setApiAccess(app.storage, agencyId, true, undefined, app.now());
    }
  });
});
