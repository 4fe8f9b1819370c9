// Roles in a real browser: a viewer reads the Calls list but the webhook page is the 403 page naming the admin role;
// the pages offer a viewer no key or cancel button where an admin has them; an owner changes a user's role with the
// Users page's select and button, and the page then shows it.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/domain/roles.js';
import { createUserWithPassword } from '../dashboard/helpers.js';
import { agentOf } from '../helpers/fixtures.js';
import { insertWaitingCall } from '../helpers/seed.js';
import {
  agencyWithUser,
  chromiumAvailable,
  PASSWORD,
  signIn,
  startBrowserWorld,
  submit,
  type BrowserWorld,
} from './browser.js';

const available = chromiumAvailable();

let world: BrowserWorld;
let viewerId = '';
let waitingCall = '';

/** A user of `accountId` with `role` and the password PASSWORD; returns their id. */
function userWithRole(accountId: string, email: string, role: Role): Promise<string> {
  return createUserWithPassword(world.prisma, accountId, email, { role, password: PASSWORD });
}

describe.skipIf(!available)('roles in the browser', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld();
    const { accountId } = await agencyWithUser(world, 'Roles Agency', 'owner@roles-browser.example');
    viewerId = await userWithRole(accountId, 'viewer@roles-browser.example', 'viewer');
    await userWithRole(accountId, 'admin@roles-browser.example', 'admin');
    waitingCall = await insertWaitingCall(world.prisma, accountId, await agentOf(world.prisma, accountId));
  }, 90_000);

  it('a viewer sees the Calls list, and the 403 page on the webhook page', async () => {
    const { page } = await signIn(world, 'viewer@roles-browser.example');
    const calls = await page.goto('/dashboard/calls');
    expect(calls?.status()).toBe(200);
    expect(await page.textContent('h1')).toContain('Calls');
    const webhook = await page.goto('/dashboard/settings/api-webhooks/webhook');
    expect(webhook?.status()).toBe(403);
    expect(await page.textContent('main')).toContain('This needs the admin role.');
    await page.context().close();
  });

  it('a viewer sees no key or cancel button, an admin sees both', async () => {
    for (const [role, shown] of [
      ['viewer', false],
      ['admin', true],
    ] as const) {
      const { page } = await signIn(world, `${role}@roles-browser.example`);
      await page.goto('/dashboard/settings/api-webhooks');
      const generate = page.getByRole('link', { name: 'Generate new key' });
      expect(await generate.count(), role).toBe(shown ? 1 : 0);
      if (shown) expect(await generate.isVisible()).toBe(true);
      else expect(await page.textContent('main')).toContain('Only an admin can generate a new key.');
      await page.goto(`/dashboard/calls/${waitingCall}`);
      const cancel = page.getByRole('button', { name: 'Cancel this call' });
      expect(await cancel.count(), role).toBe(shown ? 1 : 0);
      if (shown) expect(await cancel.isVisible()).toBe(true);
      await page.goto('/dashboard/calls');
      expect(await page.getByRole('button', { name: 'Cancel selected calls' }).count(), role).toBe(shown ? 1 : 0);
      await page.context().close();
    }
  });

  it("an owner changes a user's role on the Users page", async () => {
    const { page } = await signIn(world, 'owner@roles-browser.example');
    await page.goto('/dashboard/users');
    const form = page.locator(`form[action="/dashboard/users/${viewerId}/role"]`);
    expect(await form.locator('select[name=role]').inputValue()).toBe('viewer');
    await form.locator('select[name=role]').selectOption('admin');
    await submit(page, `form[action="/dashboard/users/${viewerId}/role"] button[type=submit]`);
    expect(await page.textContent('main')).toContain('viewer@roles-browser.example is now admin.');
    expect(await page.locator(`form[action="/dashboard/users/${viewerId}/role"] select[name=role]`).inputValue()).toBe(
      'admin',
    );
    const stored = await world.prisma.user.findUniqueOrThrow({ where: { id: viewerId } });
    expect(stored.role).toBe('admin');
    await page.context().close();
  });
});
