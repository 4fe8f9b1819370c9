// The Users page's roles: each user's role shown; an account's owners (and its agency's owners and admins, for a
// client) change it with a select and pick an invitee's role (member unless chosen), audited as the user's; a lesser
// role sees the roles and no form; the last owner stays one; a refused role is the 403 page naming the role needed.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { LAST_OWNER, type Role } from '../../src/domain/roles.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

let app: App;
let agencyId: string;
let clientId: string;
const ids = {} as Record<'owner' | 'admin' | 'viewer' | 'clientOwner', string>;
const visitors = {} as Record<'owner' | 'admin' | 'viewer' | 'clientOwner', Visitor>;

async function person(key: keyof typeof ids, accountId: string, role: Role) {
  ids[key] = await createUserWithPassword(app.storage, accountId, `${key.toLowerCase()}@people.example`, { role });
  visitors[key] = new Visitor(app);
  visitors[key].ip = `10.8.0.${Object.keys(ids).length}`;
  expect((await visitors[key].signIn(`${key.toLowerCase()}@people.example`)).status).toBe(303);
}

const roleOf = async (id: string) => (await prismaOf(app).user.findUniqueOrThrow({ where: { id } })).role;
const roleForm = (id: string) => `action="/dashboard/users/${id}/role"`;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  agencyId = (await createAgency(app.storage, { name: 'People Agency' })).id;
  clientId = (await createClient(app.storage, { agencyId, name: 'People Client', now: app.now() })).id;
  await person('owner', agencyId, 'owner');
  await person('admin', agencyId, 'admin');
  await person('viewer', agencyId, 'viewer');
  await person('clientOwner', clientId, 'owner');
});

describe('roles on the Users page', () => {
  it("shows an agency owner every user's role with a select, and changes one (audited as theirs)", async () => {
    const page = await visitors.owner.get('/dashboard/users');
    expect(page.body).toContain(roleForm(ids.viewer));
    expect(page.body).toContain(roleForm(ids.clientOwner));
    expect(page.body).toMatch(/<option value="viewer" selected>viewer<\/option>/);
    const res = await visitors.owner.submit('/dashboard/users', `/dashboard/users/${ids.viewer}/role`, {
      role: 'member',
    });
    expect(res.status).toBe(303);
    expect((await visitors.owner.get(res.location!)).body).toContain(html('viewer@people.example is now member.'));
    expect(await roleOf(ids.viewer)).toBe('member');
    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({ where: { action: 'user_role_changed' } });
    expect(entry).toMatchObject({ accountId: agencyId, actorKind: 'user', actorUserId: ids.owner });
    expect(entry.detail).toMatchObject({ user_id: ids.viewer, from: 'viewer', to: 'member' });
    await visitors.owner.submit('/dashboard/users', `/dashboard/users/${ids.viewer}/role`, { role: 'viewer' });
    expect(await roleOf(ids.viewer)).toBe('viewer');
  });

  it('invites with the role chosen, member when none is', async () => {
    for (const [email, role, expected] of [
      ['chosen@people.example', 'admin', 'admin'],
      ['default@people.example', undefined, 'member'],
    ] as const) {
      const res = await visitors.owner.submit('/dashboard/users', '/dashboard/users/invite', {
        email,
        account: agencyId,
        ...(role ? { role } : {}),
      });
      expect(res.status).toBe(200);
      expect((await prismaOf(app).user.findFirstOrThrow({ where: { email } })).role).toBe(expected);
    }
    const page = await visitors.owner.get('/dashboard/users');
    expect(page.body).toMatch(/<select id="f-invite-role" name="role">[\s\S]*<option value="member" selected>/);
  });

  it("lets an agency admin manage its clients' people, not the agency's", async () => {
    const page = await visitors.admin.get('/dashboard/users');
    expect(page.body).toContain(roleForm(ids.clientOwner));
    expect(page.body).not.toContain(roleForm(ids.viewer));
    // The invitation form offers the clients only.
    expect(page.body).toContain(`<input type="hidden" name="account" value="${clientId}">`);
    const agencyUser = await visitors.admin.submit('/dashboard/users', `/dashboard/users/${ids.viewer}/role`, {
      role: 'admin',
    });
    expect(agencyUser.status).toBe(403);
    expect(agencyUser.body).toContain(html('This needs the owner role.'));
    expect(await roleOf(ids.viewer)).toBe('viewer');
    const clientUser = await visitors.admin.submit('/dashboard/users', `/dashboard/users/${ids.clientOwner}/role`, {
      role: 'owner',
    });
    expect(clientUser.status).toBe(303);
    const invited = await visitors.admin.submit('/dashboard/users', '/dashboard/users/invite', {
      email: 'by-admin@people.example',
      account: clientId,
      role: 'viewer',
    });
    expect(invited.status).toBe(200);
    const refused = await visitors.admin.submit('/dashboard/users', '/dashboard/users/invite', {
      email: 'by-admin-2@people.example',
      account: agencyId,
    });
    expect(refused.status).toBe(403);
    expect(await prismaOf(app).user.count({ where: { email: 'by-admin-2@people.example' } })).toBe(0);
  });

  it('shows a viewer the roles without any form, and the 403 page naming the role a page needs', async () => {
    const page = await visitors.viewer.get('/dashboard/users');
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('/role"');
    expect(page.body).not.toContain('action="/dashboard/users/invite"');
    expect(page.body).toMatch(/<td data-label="Role">\s*owner\s*<\/td>/);
    const webhook = await visitors.viewer.get('/dashboard/settings/api-webhooks/webhook');
    expect(webhook.status).toBe(403);
    expect(webhook.body).toContain('<title>Not allowed');
    expect(webhook.body).toContain(html('This needs the admin role. Ask an owner of your account to give it to you.'));
    expect((await visitors.viewer.get('/dashboard/calls')).status).toBe(200);
  });

  it('keeps the last owner: demoting or disabling them is refused in words, and nothing changes', async () => {
    const alone = (await createAgency(app.storage, { name: 'Alone' })).id;
    const only = await createUserWithPassword(app.storage, alone, 'only@people.example');
    const visitor = new Visitor(app);
    visitor.ip = '10.8.1.1';
    expect((await visitor.signIn('only@people.example')).status).toBe(303);
    const res = await visitor.submit('/dashboard/users', `/dashboard/users/${only}/role`, { role: 'admin' });
    expect(res.status).toBe(400);
    expect(res.body).toContain(html(LAST_OWNER));
    expect(await roleOf(only)).toBe('owner');
  });
});
