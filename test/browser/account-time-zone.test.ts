// A user's own time zone in a real browser (issue 47): the Account page offers the browser's zone (a context in
// Asia/Kolkata, which Chromium may report by its old name Asia/Calcutta), saving it shows the pages' times there, the
// header's switch shows UTC and back (it fits a phone; axe finds nothing); without JavaScript the form works, on UTC
// until a zone is chosen.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { agencyWithUser, chromiumAvailable, signIn, startBrowserWorld, submit, type BrowserWorld } from './browser.js';

const available = chromiumAvailable();
const ACCOUNT = '/dashboard/account';
const SIGNED_IN = 'dl.facts dt:text("Signed in") + dd';
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let world: BrowserWorld;

// A real browser and a real server on a busy 2-core machine: each test gets a minute.
describe.skipIf(!available)('the time zone of the Account page in chromium', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld();
    await agencyWithUser(world, 'Zones Agency', 'kolkata@zones.example');
    await agencyWithUser(world, 'Zones Agency Two', 'noscript@zones.example');
  }, 90_000);

  it("offers the browser's zone; saved, the pages' times are in it, with UTC one click away", async () => {
    const { page, dialogs } = await signIn(world, 'kolkata@zones.example', undefined, { timezoneId: 'Asia/Kolkata' });
    await page.goto(ACCOUNT);
    expect(await page.inputValue('#f-timezone')).toBe('Asia/Kolkata');
    expect(await page.textContent(SIGNED_IN)).toMatch(/ UTC$/);
    expect(await page.textContent('header.top')).toContain('Times in UTC');

    await submit(page, 'section#time-zone button[type=submit]');
    expect(new URL(page.url()).pathname).toBe(ACCOUNT);
    expect(await page.textContent('[role=status]')).toContain('Times are shown in Asia/Kolkata now.');
    expect(await page.textContent(SIGNED_IN)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} GMT\+5:30$/);
    expect(await page.inputValue('#f-timezone')).toBe('Asia/Kolkata');

    // UTC one click away, and back: the switch returns to the page it was on.
    await page.goto('/dashboard/audit-log');
    await submit(page, 'header.top form.times button');
    expect(new URL(page.url()).pathname).toBe('/dashboard/audit-log');
    expect(await page.textContent('header.top')).toContain('Show in Asia/Kolkata');
    expect(await page.textContent('main')).toMatch(/\d{2}:\d{2}:\d{2} UTC/);
    expect(await page.textContent('main')).not.toContain('GMT+5:30');
    await submit(page, 'header.top form.times button');
    expect(await page.textContent('header.top')).toContain('Show in UTC');
    expect(await page.textContent('main')).toContain('GMT+5:30');
    expect(dialogs).toEqual([]);
  });

  it('works without JavaScript: UTC until a zone is chosen from the list', async () => {
    const { page } = await signIn(world, 'noscript@zones.example', undefined, {
      timezoneId: 'America/New_York',
      javaScriptEnabled: false,
    });
    await page.goto(ACCOUNT);
    expect(await page.inputValue('#f-timezone')).toBe('UTC');
    await page.selectOption('#f-timezone', 'Europe/Paris');
    await submit(page, 'section#time-zone button[type=submit]');
    expect(await page.textContent('[role=status]')).toContain('Times are shown in Europe/Paris now.');
    expect(await page.textContent(SIGNED_IN)).toMatch(/ CES?T$/);
  });

  it("fits the header's switch on a phone, and axe finds nothing on the Account page with a zone", async () => {
    const { page } = await signIn(world, 'kolkata@zones.example', undefined, {
      timezoneId: 'Asia/Kolkata',
      viewport: { width: 390, height: 844 },
    });
    await page.goto(ACCOUNT);
    expect(await page.textContent('header.top')).toContain('Show in UTC');
    expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(
      "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => v.id + ': ' + v.help))",
    );
    expect(violations).toEqual([]);
  });
});
