// The do-not-call list in a real browser (issue 23, point 6): add a number with a reason from the Do-not-call list page
// (the trigger then refuses it), a refused number kept in the form, a CSV file imported through the file input (a bad
// file imports nothing and lists its bad rows by line), search, the export downloaded, a number removed; and "Add
// this number to the do-not-call list" on a waiting call's detail view. Markup in a reason never runs (no dialog).
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import { storageOf } from '../helpers/database.js';
import {
  agencyWithUser,
  apiTrigger,
  chromiumAvailable,
  signIn,
  startBrowserWorld,
  submit,
  type BrowserWorld,
} from './browser.js';

const available = chromiumAvailable();
let world: BrowserWorld;

describe.skipIf(!available)('the do-not-call list in chromium', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld({ DISPATCH_ENABLED: 'false' });
  }, 90_000);

  it('adds, searches, imports, exports and removes; the trigger refuses a listed number', async () => {
    const { accountId } = await agencyWithUser(world, 'Quiet Agency', 'owner@dnc.example');
    const storage = storageOf(world.prisma);
    const agent = await createAgent(storage, { accountId, name: 'Front desk', phone: '+14155550100', now: new Date() });
    await setDefaultAgent(storage, accountId, agent.id, undefined, new Date());
    const { key } = await generateKey(storage, accountId, undefined, { now: new Date() });
    const { page, dialogs } = await signIn(world, 'owner@dnc.example');

    await submit(page, 'nav a:has-text("Do-not-call list")');
    expect(page.url()).toMatch(/\/dashboard\/do-not-call$/);
    expect(await page.textContent('main')).toContain('No numbers yet.');

    // Add one, with a reason carrying markup.
    await page.fill('form[aria-label="Add a number"] input[name=phone_number]', '+14155552671');
    await page.fill('form[aria-label="Add a number"] input[name=reason]', '<img src=x onerror=alert(1)> asked');
    await submit(page, 'button:has-text("Add to the list")');
    expect(await page.textContent('.notice.ok')).toContain("+14155552671 is on the agency's do-not-call list");
    expect(await page.locator('table.do-not-call tbody tr').count()).toBe(1);
    expect(await page.textContent('table.do-not-call tbody')).toContain('<img src=x onerror=alert(1)> asked');
    const refused = await apiTrigger(world, key, { phone_number: '+14155552671' });
    expect(refused).toEqual({
      status: 400,
      body: { success: false, error: 'Phone number is on the do-not-call list' },
    });

    // A number as people write it is stored, and shown, in E.164; one that is none stays in the form with the problem.
    await page.fill('form[aria-label="Add a number"] input[name=phone_number]', '+1 (415) 555-2672');
    await submit(page, 'button:has-text("Add to the list")');
    expect(await page.textContent('.notice.ok')).toContain("+14155552672 is on the agency's do-not-call list");
    expect(await page.locator('table.do-not-call tbody td code').allTextContents()).toEqual(['+14155552672']);
    await page.goto('/dashboard/do-not-call');
    await page.fill('form[aria-label="Add a number"] input[name=phone_number]', '555-2672');
    await submit(page, 'button:has-text("Add to the list")');
    expect(await page.textContent('.field-error')).toContain('"555-2672" is not a phone number');
    expect(await page.inputValue('form[aria-label="Add a number"] input[name=phone_number]')).toBe('555-2672');

    // Import through the file input: a bad file first (nothing imported, its bad rows by line, the choice to import
    // the good rows offered), then its good rows, then a good file.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'oct-dnc-browser-'));
    const bad = path.join(dir, 'bad.csv');
    writeFileSync(bad, 'Phone Number,Reason\n+14155550001,fine\n555-0002,local\n');
    await page.setInputFiles('input[type=file][name=file]', bad);
    await submit(page, 'button:has-text("Import")');
    expect(await page.textContent('.import-problems')).toContain('Line 3: "555-0002" is not a phone number');
    expect(await page.locator('table.do-not-call tbody tr').count()).toBe(2);
    expect(await page.isChecked('input[name=mode][value=good_rows]')).toBe(true);
    await page.setInputFiles('input[type=file][name=file]', bad);
    await submit(page, 'button:has-text("Import")');
    expect(await page.textContent('.notice')).toContain('Imported 1 number; this row was left out');
    expect(await page.locator('table.do-not-call tbody tr').count()).toBe(3);
    const good = path.join(dir, 'good.csv');
    writeFileSync(good, 'phone_number,reason\n+14155550001,fine\n+14155550002,"by letter, twice"\n+14155552671,dup\n');
    await page.setInputFiles('input[type=file][name=file]', good);
    await submit(page, 'button:has-text("Import")');
    expect(await page.textContent('.notice.ok')).toBe('Imported: 1 number added; skipped 2 already on the list.');
    expect(await page.locator('table.do-not-call tbody tr').count()).toBe(4);

    // Search by a reason's words, then by a number's beginning.
    await page.fill('input[name=q]', 'LETTER');
    await submit(page, 'button:has-text("Search")');
    expect(await page.locator('table.do-not-call tbody td code').allTextContents()).toEqual(['+14155550002']);
    await page.fill('input[name=q]', '+1415555000');
    await submit(page, 'button:has-text("Search")');
    expect(await page.locator('table.do-not-call tbody td code').allTextContents()).toEqual([
      '+14155550001',
      '+14155550002',
    ]);

    // The export downloads the whole list.
    await page.goto('/dashboard/do-not-call');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('a:has-text("Export the whole list")'),
    ]);
    expect(download.suggestedFilename()).toBe('do-not-call-quiet-agency.csv');
    const csv = readFileSync(await download.path(), 'utf8');
    expect(csv.split('\r\n').slice(0, 3)).toEqual([
      '\ufeff"phone_number","reason","added_by","added_at"',
      expect.stringMatching(/^"\+14155550001","fine","owner@dnc\.example",/) as string,
      expect.stringMatching(/^"\+14155550002","by letter, twice","owner@dnc\.example",/) as string,
    ]);

    // Remove one.
    await submit(page, 'form[aria-label="Remove +14155550001"] button');
    expect(await page.textContent('.notice.ok')).toContain('+14155550001 is no longer on the list');
    expect(await page.locator('table.do-not-call tbody td code').allTextContents()).not.toContain('+14155550001');
    expect(dialogs).toEqual([]);
  });

  it("adds a waiting call's number from its detail view and shows it listed there", async () => {
    const { accountId } = await agencyWithUser(world, 'Caller Agency', 'owner@calls-dnc.example');
    const storage = storageOf(world.prisma);
    const agent = await createAgent(storage, { accountId, name: 'Desk', phone: '+14155550100', now: new Date() });
    await setDefaultAgent(storage, accountId, agent.id, undefined, new Date());
    const { key } = await generateKey(storage, accountId, undefined, { now: new Date() });
    const { page, dialogs } = await signIn(world, 'owner@calls-dnc.example');
    const res = await apiTrigger(world, key, { phone_number: '+14155559876' });
    expect(res.status).toBe(200);
    const callId = res.body.call_id as string;

    await page.goto(`/dashboard/calls/${callId}`);
    await page.fill('form.add-do-not-call input[name=reason]', 'Asked on the phone');
    await submit(page, 'button:has-text("Add this number to the do-not-call list")');
    expect(page.url()).toMatch(new RegExp(`/dashboard/calls/${callId}$`));
    expect(await page.textContent('.notice.ok')).toContain("+14155559876 is on the agency's do-not-call list");
    expect(await page.textContent('.do-not-call-listed')).toMatch(
      /On the agency's list since .+, added by owner@calls-dnc\.example: Asked on the phone\./,
    );
    expect(await page.locator('button:has-text("Add this number to the do-not-call list")').count()).toBe(0);
    await submit(page, '.do-not-call-listed a:has-text("See the list")');
    expect(await page.locator('table.do-not-call tbody td code').allTextContents()).toEqual(['+14155559876']);
    expect(dialogs).toEqual([]);
  });
});
