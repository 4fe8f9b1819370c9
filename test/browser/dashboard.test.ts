// The dashboard in a real browser: a set-password link used once, sign-in (wrong password, then right), sign-out,
// markup in a name shown as text, and on every page the CSP header with no script and no inline handler.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAgency } from '../../src/admin/accounts.js';
import { createUser } from '../../src/admin/users.js';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { chromiumAvailable, startBrowserWorld, type BrowserWorld } from './browser.js';
import { storageOf } from '../helpers/database.js';

const available = chromiumAvailable();
const PASSWORD = 'a long and happy passphrase';
const HOSTILE_NAME = '<script>alert("pwned")</script><img src=x onerror=alert(1)> Acme';

let world: BrowserWorld;
let prisma: PrismaClient;
let setPasswordPath: string;
const dialogs: string[] = [];

/**
 * Opens `path` and returns its CSP header and how many scripts other than our own files (an inline one, another
 * site's) and inline event handlers the page has.
 */
async function inspect(page: Page, path: string) {
  const response = await page.goto(path);
  // Runs in the page (the project's types have no DOM library: the little used here is declared).
  const counts = await page.evaluate(() => {
    type Element = { attributes: ArrayLike<{ name: string }> };
    const doc = (
      globalThis as unknown as {
        document: {
          scripts: ArrayLike<{ src: string }>;
          location: { origin: string };
          querySelectorAll(selector: string): ArrayLike<Element>;
        };
      }
    ).document;
    const own = `${doc.location.origin}/dashboard/assets/`;
    return {
      scripts: Array.from(doc.scripts).filter((script) => !script.src.startsWith(own)).length,
      handlers: Array.from(doc.querySelectorAll('*')).filter((el) =>
        Array.from(el.attributes).some((a) => a.name.startsWith('on')),
      ).length,
    };
  });
  return {
    url: page.url(),
    status: response?.status(),
    csp: response?.headers()['content-security-policy'],
    ...counts,
  };
}

async function newPage() {
  const context = await world.context();
  const page = await context.newPage();
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return page;
}

// A real browser on a busy 2-core machine: each test gets a minute.
describe.skipIf(!available)('dashboard in chromium', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld();
    prisma = createPrisma(world.databaseUrl, { max: 2 });
    const { id } = await createAgency(storageOf(prisma), { name: HOSTILE_NAME });
    const user = await createUser(storageOf(prisma), {
      accountId: id,
      email: 'owner@acme.example',
      actor: { kind: 'operator' },
      now: new Date(),
    });
    setPasswordPath = `/dashboard/set-password/${user.token}`;
    return async () => {
      await prisma.$disconnect();
    };
  }, 90_000);

  it('sets the password from the one-time link, which then refuses a second use', async () => {
    const page = await newPage();
    await page.goto(setPasswordPath);
    await page.waitForLoadState();
    expect(await page.textContent('main')).toContain('owner@acme.example');
    await page.fill('input[name=password]', PASSWORD);
    await page.fill('input[name=confirm]', PASSWORD);
    await Promise.all([page.waitForURL('**/dashboard/sign-in'), page.click('button[type=submit]')]);
    expect(await page.textContent('[role=status]')).toContain('Your password is set.');
    const again = await page.goto(setPasswordPath);
    expect(again?.status()).toBe(410);
    expect(await page.textContent('main')).toContain('expired or was already used');
  });

  it('signs in: a wrong password is told, the right one opens the overview; sign-out ends it', async () => {
    const page = await newPage();
    await page.goto('/dashboard');
    expect(page.url()).toContain('/dashboard/sign-in');
    await page.fill('input[name=email]', 'Owner@Acme.example');
    await page.fill('input[name=password]', 'not my password at all');
    await page.click('button[type=submit]');
    await page.waitForLoadState();
    expect(await page.textContent('[role=alert]')).toBe('The email or password is not right.');
    await page.fill('input[name=password]', PASSWORD);
    await Promise.all([page.waitForURL(/\/dashboard$/), page.click('main button[type=submit]')]);
    expect(await page.textContent('h1')).toBe('Overview');
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === '__Host-oct_session')).toMatchObject({
      secure: true,
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
    });

    await page.click('a[href="/dashboard/account"]');
    await page.waitForURL('**/dashboard/account');
    await page.goto('/dashboard/audit-log');
    expect(await page.textContent('table.rows')).toContain('Signed in');

    await Promise.all([page.waitForURL('**/dashboard/sign-in'), page.click('header button[type=submit]')]);
    await page.goto('/dashboard/account');
    expect(page.url()).toContain('/dashboard/sign-in?next=');
  });

  it('shows markup in a name as text: nothing runs', async () => {
    const page = await newPage();
    await page.goto('/dashboard/sign-in');
    await page.fill('input[name=email]', 'owner@acme.example');
    await page.fill('input[name=password]', PASSWORD);
    await Promise.all([page.waitForURL(/\/dashboard$/), page.click('main button[type=submit]')]);
    expect(await page.textContent('#calls-now tbody th')).toBe(`${HOSTILE_NAME} (agency)`);
    expect(await page.textContent('header .who')).toContain(HOSTILE_NAME);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('sends the CSP header on every page, and no page has an inline script or handler', async () => {
    const visitor = await newPage();
    const shown = [
      await inspect(visitor, '/dashboard/sign-in'),
      await inspect(visitor, `/dashboard/set-password/${'x'.repeat(43)}`),
    ];
    await visitor.goto('/dashboard/sign-in');
    await visitor.fill('input[name=email]', 'owner@acme.example');
    await visitor.fill('input[name=password]', PASSWORD);
    await Promise.all([visitor.waitForURL(/\/dashboard$/), visitor.click('main button[type=submit]')]);
    for (const path of [
      '/dashboard',
      '/dashboard/account',
      '/dashboard/audit-log',
      '/dashboard/confirm-password',
      '/dashboard/no-such-page',
    ])
      shown.push(await inspect(visitor, path));
    for (const page of shown) {
      expect(page.csp, page.url).toContain("default-src 'none'");
      expect(page.csp, page.url).toContain("frame-ancestors 'none'");
      expect(page.csp, page.url).not.toContain('unsafe-inline');
      expect(page.scripts, page.url).toBe(0);
      expect(page.handlers, page.url).toBe(0);
    }
    expect(shown.map((p) => p.status)).toEqual([200, 410, 200, 200, 200, 200, 404]);
  });
});
