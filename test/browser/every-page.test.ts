// Every dashboard page in chromium, signed out, as an agency user and as a client user, at 1280 px and at 390 px:
// axe-core (run inside the page) finds no violation, no page scrolls sideways (at 390 px above all), times and ids
// stay on one line at 1280 px, and no request a page makes fails (its stylesheet, icon and script included). The data
// is the showcase (test/browser/showcase.ts), so that no table is empty; the pages only a form's answer shows (a new
// key, an invitation link, a confirmation, a form with its error) are reached through their forms.
// The dashboard's screenshots are taken here, as each page is checked at each width (`npm run screenshots` runs this
// file): into a temporary directory dropped afterwards, with SCREENSHOTS=1 into docs/screenshots/, or with
// SCREENSHOTS_OUT=<dir> into that directory (kept). One showcase and one visit per page serve both: apart, the
// screenshots built their own showcase and drew every page twice more.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contextFor,
  dashboardPages,
  dashboardPagesOutline,
  makeShowcase,
  openPage,
  SCREENSHOTS_DIR,
  SHOWCASE_ENV,
  startShowcaseReceiver,
  WIDTHS,
  type DashboardPage,
  type Showcase,
  type ShowcaseReceiver,
  type Viewer,
} from './showcase.js';
import { createAgency } from '../../src/admin/accounts.js';
import { createUser, setPasswordWithLink } from '../../src/admin/users.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { chromiumAvailable, startBrowserWorld, submit, type BrowserWorld } from './browser.js';
import { storageOf } from '../helpers/database.js';
import { startSmtp, type TestSmtp } from '../helpers/smtp.js';

const available = chromiumAvailable();
const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const AXE_SOURCE = readFileSync(AXE_PATH, 'utf8');
const intoDocs = process.env.SCREENSHOTS === '1';
const keptDir = process.env.SCREENSHOTS_OUT;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let world: BrowserWorld;
let receiver: ShowcaseReceiver | undefined;
let smtp: TestSmtp | undefined;
let showcase: Showcase;
/** Where the screenshots go. */
let outDir: string | undefined;
const contexts = {} as Record<Viewer, BrowserContext>;
const pages = {} as Record<Viewer, Page>;
/** What went wrong while a page loaded: failed requests, errors in its console. */
const troubles = new Map<Page, string[]>();

afterAll(async () => {
  await receiver?.close();
  await smtp?.stop();
  if (outDir && !intoDocs && !keptDir) rmSync(outDir, { recursive: true, force: true });
});

async function newPage(viewer: Viewer): Promise<Page> {
  const page = await contexts[viewer].newPage();
  const seen: string[] = [];
  troubles.set(page, seen);
  page.on('response', (response) => {
    // The page itself may be an error page on purpose (its status is checked); what it loads may not fail.
    if (response.request().resourceType() !== 'document' && response.status() >= 400)
      seen.push(`${response.status()} ${response.url()}`);
  });
  // An aborted request is the browser's own choice: it drops what a document still loads (its favicon, say) when the
  // next page replaces it, and drops a favicon fetch it no longer needs. An error answer is caught above; every other
  // failure (refused, blocked by the CSP, reset) is a problem.
  page.on('requestfailed', (request) => {
    const error = request.failure()?.errorText;
    if (error !== 'net::ERR_ABORTED') seen.push(`failed ${request.url()}: ${error}`);
  });
  page.on('console', (message) => {
    // "Failed to load resource" is the error page's own status, already checked; anything else is a problem (a
    // script error, a CSP refusal).
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      seen.push(`console: ${message.text()}`);
  });
  return page;
}

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

/** axe-core's violations on the page as it is now (injected through the DevTools protocol: the CSP allows no inline script). */
async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if ((await page.evaluate('typeof window.axe')) === 'undefined') await page.evaluate(AXE_SOURCE);
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ': ' + n.failureSummary.replace(/\\s+/g, ' ')),
    })))`);
}

/** Times and ids (time, td.time, td.id, .id code) whose text takes more than one line. */
async function wrappedTimesAndIds(page: Page): Promise<string[]> {
  return page.evaluate(`Array.from(document.querySelectorAll('main time, main td.time, main td.id, main .id code'))
    .filter((el) => {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        if (!text.textContent.trim()) continue;
        const range = document.createRange();
        range.selectNodeContents(text);
        const style = getComputedStyle(text.parentElement);
        const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.5;
        if (range.getBoundingClientRect().height > line * 1.5) return true;
      }
      return false;
    })
    .map((el) => el.tagName.toLowerCase() + '.' + el.className + ': ' + el.textContent.trim())`);
}

/** How much wider than the screen the page is (0: no sideways scroll), and the innermost elements that stick out. */
async function sidewaysScroll(page: Page): Promise<{ wider: number; culprits: string[] }> {
  return page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    const out = Array.from(document.body.querySelectorAll('*')).filter((el) => el.getBoundingClientRect().right > width + 0.5);
    // Text that sticks out of its element (a cell narrower than a word that may not break).
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(text);
      if (range.getBoundingClientRect().right > width + 0.5 && !out.includes(text.parentElement)) out.push(text.parentElement);
    }
    const innermost = out.filter((el) => !out.some((other) => other !== el && el.contains(other)));
    return {
      wider: document.documentElement.scrollWidth - width,
      culprits: innermost.slice(0, 4).map((el) =>
        el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).replace(/ /g, '.') : '') +
        ' (' + Math.round(el.getBoundingClientRect().right) + ' px): ' + (el.textContent || '').trim().slice(0, 60)),
    };
  })()`);
}

/** The server's error lines (level 50 and up) so far. */
function serverErrors(): string[] {
  return world.server
    .output()
    .split('\n')
    .filter((line) => /"level":(5|6)0/.test(line));
}

/**
 * The full-page picture of `page` at the size it is shown at, saved as `<name>-<width>.png`: what is wrong with it (not
 * a PNG, wider than the screen, shorter than the screen), in words.
 */
async function pictureProblems(page: Page, name: string, size: (typeof WIDTHS)[number]): Promise<string[]> {
  const file = path.join(outDir!, `${name}-${size.width}.png`);
  await page.screenshot({ path: file, fullPage: true });
  const png = readFileSync(file);
  // IHDR: width then height, big-endian, at bytes 16 and 20. No page is wider than the screen: a full-page picture of
  // a page that scrolls sideways would be wider.
  if (!png.subarray(0, 8).equals(PNG_SIGNATURE)) return [`${size.width} px: the picture is not a PNG`];
  const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
  return width === size.width && height >= size.height
    ? []
    : [
        `${size.width} px: the picture is ${width} by ${height} px, not ${size.width} wide and ${size.height} high or more`,
      ];
}

/**
 * The page as it is loaded, at 1280 px and then at 390 px (the same document, resized; pictured at each width when
 * `picture` names it): every problem found, in words; an empty list when it is fine.
 */
async function problemsOf(page: Page, picture?: string): Promise<string[]> {
  const problems = [...(troubles.get(page) ?? [])];
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    if (picture) problems.push(...(await pictureProblems(page, picture, size)));
    for (const v of await axeViolations(page))
      problems.push(`${size.width} px: axe ${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.join('\n    ')}`);
    if (size.width === 1280)
      for (const wrapped of await wrappedTimesAndIds(page))
        problems.push(`${size.width} px: wraps onto several lines: ${wrapped}`);
    const { wider, culprits } = await sidewaysScroll(page);
    if (wider > 0) problems.push(`${size.width} px: scrolls sideways by ${wider} px\n    ${culprits.join('\n    ')}`);
  }
  troubles.get(page)?.splice(0);
  await page.setViewportSize(WIDTHS[0]);
  return problems;
}

// A real browser on a busy 2-core machine, with calls that ring and talk first.
describe.skipIf(!available)('every dashboard page in chromium at 1280 px and 390 px', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    receiver = await startShowcaseReceiver();
    smtp = await startSmtp();
    world = await startBrowserWorld({
      ...SHOWCASE_ENV,
      SMTP_URL: smtp.url,
      PUBLIC_BASE_URL: 'https://calls.example.com',
    });
    showcase = await makeShowcase(storageOf(world.prisma), { port: world.server.port, receiver });
    outDir = intoDocs ? SCREENSHOTS_DIR : (keptDir ?? mkdtempSync(path.join(os.tmpdir(), 'oct-screenshots-')));
    mkdirSync(outDir, { recursive: true });
    const emails: Record<Viewer, string | undefined> = {
      visitor: undefined,
      agency: showcase.email,
      client: showcase.clientEmail,
    };
    for (const viewer of ['visitor', 'agency', 'client'] as const) {
      contexts[viewer] = await contextFor(world.browser, {
        baseUrl: world.baseUrl,
        email: emails[viewer],
        password: showcase.password,
      });
      pages[viewer] = await newPage(viewer);
    }
  }, 180_000);

  it('injects axe-core through the DevTools protocol, since the CSP refuses an inline script', async () => {
    const page = pages.visitor;
    await openPage(page, { path: '/dashboard/sign-in' });
    await page.addScriptTag({ path: AXE_PATH }).catch(() => undefined);
    expect(await page.evaluate('typeof window.axe')).toBe('undefined');
    troubles.get(page)?.splice(0); // the refusal, logged on purpose
    await page.evaluate(AXE_SOURCE);
    expect(await page.evaluate('typeof window.axe.run')).toBe('function');
  });

  it('answers the icon at /dashboard/assets/favicon.svg and /favicon.ico, linked from every page', async () => {
    const page = pages.visitor;
    const icon = await page.request.get('/favicon.ico');
    expect(icon.status()).toBe(200);
    expect(icon.url()).toMatch(/\/dashboard\/assets\/favicon\.svg$/);
    expect(icon.headers()['content-type']).toBe('image/svg+xml');
    await openPage(page, { path: '/dashboard/sign-in' });
    expect(await page.getAttribute('link[rel=icon]', 'href')).toBe('/dashboard/assets/favicon.svg');
  });

  it('puts a skip link to the content first in the tab order, with a visible focus outline', async () => {
    const page = pages.agency;
    await openPage(page, { path: '/dashboard' });
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.getAttribute("href")')).toBe('#main');
    expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('location.hash')).toBe('#main');
  });

  it('collapses the navigation behind one Menu button at 390 px, which opens without script', async () => {
    const page = pages.agency;
    await openPage(page, { path: '/dashboard' });
    expect(await page.isVisible('nav a[href="/dashboard/calls"]')).toBe(true);
    expect(await page.isVisible('details.menu > summary')).toBe(false);
    await page.setViewportSize(WIDTHS[1]);
    expect(await page.isVisible('nav a[href="/dashboard/calls"]')).toBe(false);
    await page.click('details.menu > summary');
    expect(await page.isVisible('nav a[href="/dashboard/calls"]')).toBe(true);
    await page.setViewportSize(WIDTHS[0]);
  });

  describe('pages a link opens, each pictured at both widths', () => {
    // The paths need the showcase's ids; the test names do not.
    const names = dashboardPagesOutline().map((p) => p.name);
    it.each(names)('%s', async (name) => {
      const entry = dashboardPages(showcase).find((p) => p.name === name) as DashboardPage;
      const page = pages[entry.viewer];
      await openPage(page, entry).catch((error: Error) => {
        // A page that answered 500 says why only in the server's log.
        throw new Error(`${error.message}\nserver errors:\n${serverErrors().join('\n')}`);
      });
      expect(await problemsOf(page, entry.name)).toEqual([]);
    });
  });

  describe('pages a form opens', () => {
    it('sign-in with a wrong password: the error describes both fields', async () => {
      const page = pages.visitor;
      await openPage(page, { path: '/dashboard/sign-in' });
      await page.fill('input[name=email]', showcase.email);
      await page.fill('input[name=password]', 'not the password at all');
      await submit(page, 'main button[type=submit]');
      expect(await page.getAttribute('input[name=password]', 'aria-describedby')).toBe('sign-in-error');
      expect(await problemsOf(page)).toEqual([]);
    });

    it('forgot password, and the answer to it', async () => {
      const page = pages.visitor;
      await openPage(page, { path: '/dashboard/forgot-password' });
      expect(await problemsOf(page)).toEqual([]);
      await page.fill('input[name=email]', 'someone@example.com');
      await submit(page, 'main button[type=submit]');
      expect(await page.textContent('h1')).toBe('Check your e-mail');
      expect(await problemsOf(page)).toEqual([]);
    });

    it('set password from a one-time link', async () => {
      const { token } = await createUser(storageOf(world.prisma), {
        accountId: showcase.agencyId,
        email: 'new.colleague@northwind-growth.example',
        actor: { kind: 'operator' },
        now: new Date(),
      });
      const page = pages.visitor;
      await openPage(page, { path: `/dashboard/set-password/${token}` });
      expect(await problemsOf(page)).toEqual([]);
      await page.fill('input[name=password]', 'a long and happy passphrase');
      await page.fill('input[name=confirm]', 'a different long passphrase');
      await submit(page, 'main button[type=submit]');
      expect(await page.getAttribute('#f-confirm', 'aria-invalid')).toBe('true');
      expect(await page.textContent('#f-password-error')).toContain('not the same');
      expect(await problemsOf(page)).toEqual([]);
    });

    it('a do-not-call number refused: the error next to its field', async () => {
      const page = pages.agency;
      await openPage(page, { path: '/dashboard/do-not-call' });
      await page.fill('#f-phone-number', '555 0100');
      await submit(page, 'form[aria-label="Add a number"] button[type=submit]');
      // The field's hint (the country a number without its code is read in), then its error.
      expect(await page.getAttribute('#f-phone-number', 'aria-describedby')).toBe(
        'f-phone-number-hint f-phone-number-error',
      );
      expect(await problemsOf(page)).toEqual([]);
    });

    it('an account password change refused', async () => {
      const page = pages.client;
      await openPage(page, { path: '/dashboard/account' });
      await page.fill('input[name=current]', showcase.password);
      await page.fill('input[name=password]', 'a long and happy passphrase');
      await page.fill('input[name=confirm]', 'not the same passphrase');
      await submit(page, 'form[action="/dashboard/account/password"] button[type=submit]');
      expect(await page.getAttribute('input[name=confirm]', 'aria-describedby')).toBe('password-error');
      expect(await problemsOf(page)).toEqual([]);
    });

    it('an invitation, and a new sign-in link, each shown once', async () => {
      const page = pages.agency;
      await openPage(page, { path: '/dashboard/users' });
      await page.fill('#f-invite-email', 'taylor.brooks@northwind-growth.example');
      await submit(page, 'form[action="/dashboard/users/invite"] button[type=submit]');
      expect(await page.textContent('h1')).toBe('Invitation link');
      expect(await problemsOf(page)).toEqual([]);
      await openPage(page, { path: '/dashboard/users' });
      const row = page.locator('tr', { hasText: 'jordan.kim@northwind-growth.example' });
      await Promise.all([page.waitForNavigation(), row.locator('button:has-text("New sign-in link")').click()]);
      expect(await page.textContent('h1')).toBe('New sign-in link');
      expect(await problemsOf(page)).toEqual([]);
    });

    it('switching API access off asks first', async () => {
      const page = pages.agency;
      await openPage(page, { path: '/dashboard/settings/api-webhooks' });
      await submit(page, 'form[action$="/api-access"] button[type=submit]');
      expect(await page.textContent('h1')).toBe('Switch API access off?');
      expect(await problemsOf(page)).toEqual([]);
    });

    it('a new API key, shown once', async () => {
      const page = pages.client;
      await openPage(page, { path: '/dashboard/settings/api-webhooks/key' });
      const confirm = page.locator('input[name=confirm]');
      if (await confirm.count()) await confirm.check();
      await submit(page, 'form[action$="/key"] button[type=submit]');
      expect(await page.textContent('h1')).toBe('Your new API key');
      expect(await problemsOf(page)).toEqual([]);
    });

    // Last: it gives the showcase's email a user in a second agency, with the same password.
    it('choosing an account when the password opens users in several', async () => {
      const storage = storageOf(world.prisma);
      const { id: second } = await createAgency(storage, { name: 'Second Agency of the Same Person' });
      const { token } = await createUser(storage, {
        now: new Date(),
        accountId: second,
        email: showcase.email,
        actor: { kind: 'operator' },
        allowExistingEmail: true,
      });
      expect(
        (await setPasswordWithLink(storage, { token, password: showcase.password, ip: null, now: new Date() })).ok,
      ).toBe(true);
      const context = await world.context();
      try {
        const page = await context.newPage();
        troubles.set(page, []);
        await openPage(page, { path: '/dashboard/sign-in' });
        await page.fill('input[name=email]', showcase.email);
        await page.fill('input[name=password]', showcase.password);
        await submit(page, 'main button[type=submit]');
        expect(await page.textContent('h1')).toBe('Choose an account');
        expect(await problemsOf(page)).toEqual([]);
        await submit(page, 'main button:has-text("Second Agency of the Same Person")');
        expect(new URL(page.url()).pathname).toBe('/dashboard');
      } finally {
        await context.close();
      }
    });
  });
});

describe('the dashboard docs', () => {
  it('show both pictures of every page, and the pictures are there', () => {
    const docs = readFileSync(path.join(PROJECT_ROOT, 'docs', 'dashboard.md'), 'utf8');
    for (const page of dashboardPagesOutline())
      for (const { width } of WIDTHS) {
        const file = `${page.name}-${width}.png`;
        expect(docs, file).toContain(`src="screenshots/${file}"`);
        expect(existsSync(path.join(SCREENSHOTS_DIR, file)), file).toBe(true);
      }
  });
});
