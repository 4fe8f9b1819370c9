// Live refresh in a real browser (issue 24, point 1): a call's status changes on the open Overview, Calls list and
// detail view without a reload (a waiting call canceled as callctl does it turns Failed), the strict CSP holds (no
// console error from it), polling stops once nothing is active, and a refresh is held back while a box is ticked.
// The dispatcher is off, so triggered calls wait until canceled.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import { cancelCall } from '../../src/admin/calls.js';
import { storageOf } from '../helpers/database.js';
import {
  agencyWithUser,
  apiTrigger,
  chromiumAvailable,
  signIn,
  startBrowserWorld,
  type BrowserWorld,
} from './browser.js';

const available = chromiumAvailable();
let world: BrowserWorld;

/**
 * The page's globals the test reads (the project's types have no DOM library). Functions run in the page are sent
 * as source: each names `globalThis` itself.
 */
interface Probe {
  /** Set by the test after loading a page: gone if the page reloads. */
  loadedOnce?: boolean;
  /** How many refreshes htmx has considered (each poll tick), counted by a listener the test adds. */
  ticks?: number;
  document: {
    addEventListener(type: string, listener: () => void): void;
    querySelector(selector: string): { getAttribute(name: string): string | null; textContent: string | null } | null;
  };
}

/** Marks the loaded page and counts htmx's poll ticks; `stillLoaded` tells whether the page is still that one. */
async function watch(page: Page) {
  await page.evaluate(() => {
    const w = globalThis as unknown as Probe;
    w.loadedOnce = true;
    w.ticks = 0;
    w.document.addEventListener('htmx:confirm', () => {
      w.ticks = (w.ticks ?? 0) + 1;
    });
  });
  return {
    stillLoaded: () => page.evaluate(() => (globalThis as unknown as Probe).loadedOnce === true),
    ticks: () => page.evaluate(() => (globalThis as unknown as Probe).ticks ?? 0),
  };
}

/** Waits until `selector`'s text contains `text` (the page refreshing itself). */
async function waitForText(page: Page, selector: string, text: string) {
  await page.waitForFunction(
    ([s, t]) => ((globalThis as unknown as Probe).document.querySelector(s!)?.textContent ?? '').includes(t!),
    [selector, text],
  );
}

/** Waits until the live region has no poll trigger (the server's copy said nothing is active). */
async function waitForPollingToStop(page: Page) {
  await page.waitForFunction(() => {
    const region = (globalThis as unknown as Probe).document.querySelector('#live');
    return region !== null && region.getAttribute('hx-trigger') === null;
  });
}

describe.skipIf(!available)('live refresh in chromium', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld({ DISPATCH_ENABLED: 'false' });
  }, 90_000);

  it('shows status changes on the Overview, the Calls list and a call without a reload, then stops', async () => {
    const { accountId } = await agencyWithUser(world, 'Live Agency', 'owner@live.example');
    const storage = storageOf(world.prisma);
    const agent = await createAgent(storage, { accountId, name: 'Front desk', phone: '+14155550100', now: new Date() });
    await setDefaultAgent(storage, accountId, agent.id, undefined, new Date());
    const { key } = await generateKey(storage, accountId, undefined, { now: new Date() });
    const { page, dialogs } = await signIn(world, 'owner@live.example');
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !/favicon/.test(message.location().url)) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const trigger = async (phone: string) => {
      const res = await apiTrigger(world, key, { phone_number: phone });
      expect(res.status).toBe(200);
      return res.body.call_id as string;
    };
    const cancel = (id: string) => cancelCall(storage, id, { kind: 'operator' }, new Date());

    // The Overview: two calls waiting; each canceled in turn shows without a reload; then polling stops.
    const [first, second] = [await trigger('+14155552671'), await trigger('+14155552672')];
    await page.goto('/dashboard');
    const overview = await watch(page);
    const waitingCell = '#calls-now tbody td:nth-of-type(2)';
    expect(await page.textContent(waitingCell)).toBe('2');
    expect(await page.getAttribute('#live', 'hx-trigger')).toBe('every 5s');
    await cancel(first);
    await waitForText(page, waitingCell, '1');
    await cancel(second);
    await waitForText(page, waitingCell, '0');
    await waitForText(page, '#calls-now tbody td:nth-of-type(7)', '2');
    await waitForPollingToStop(page);
    expect(await overview.stillLoaded()).toBe(true);
    // Nothing asks again: a tick would come within 5 s.
    const ticks = await overview.ticks();
    await page.waitForTimeout(6_000);
    expect(await overview.ticks()).toBe(ticks);

    // The Calls list: a ticked box holds the refresh back (the user is choosing calls to cancel), unticked it goes on.
    const [third, fourth] = [await trigger('+14155552673'), await trigger('+14155552674')];
    await page.goto('/dashboard/calls');
    const list = await watch(page);
    const row = (id: string) => `#live table tr:has(a[href="/dashboard/calls/${id}"])`;
    expect(await page.textContent(row(third))).toContain('Waiting');
    // Untouched, the filters (a form too) hold nothing back.
    await page.waitForFunction(() => ((globalThis as unknown as Probe).ticks ?? 0) >= 1);
    expect(await page.getAttribute('#live', 'data-live-paused')).toBeNull();
    await page.check(`input[name=call][value="${fourth}"]`);
    // Focus leaves the box (a click on the heading, outside the region): only the ticked box holds the refresh.
    await page.click('h1');
    await cancel(third);
    const before = await list.ticks();
    await page.waitForFunction((n) => ((globalThis as unknown as Probe).ticks ?? 0) >= n + 2, before);
    expect(await page.getAttribute('#live', 'data-live-paused')).toBe('form');
    expect(await page.textContent(row(third))).toContain('Waiting');
    expect(await page.isChecked(`input[name=call][value="${fourth}"]`)).toBe(true);
    await page.uncheck(`input[name=call][value="${fourth}"]`);
    await page.click('h1');
    await waitForText(page, row(third), 'Failed: canceled');
    expect(await page.textContent(row(fourth))).toContain('Waiting');
    await cancel(fourth);
    await waitForText(page, row(fourth), 'Failed: canceled');
    await waitForPollingToStop(page);
    expect(await list.stillLoaded()).toBe(true);

    // A call's detail view: Waiting, then Failed (canceled) on the open page; the title and heading stay single.
    const fifth = await trigger('+14155552675');
    await page.goto(`/dashboard/calls/${fifth}`);
    const detail = await watch(page);
    expect(await page.textContent('dl.facts .status')).toBe('Waiting');
    await cancel(fifth);
    await waitForText(page, 'dl.facts .status', 'Failed');
    expect(await page.textContent('dl.facts')).toContain('Canceled');
    await waitForPollingToStop(page);
    expect(await detail.stillLoaded()).toBe(true);
    expect(await page.locator('h1').count()).toBe(1);
    expect(await page.locator('#live').count()).toBe(1);
    expect(await page.title()).toMatch(/^[^·]+· Outbound calls$/);

    // No CSP violation (htmx adds no inline style and evaluates nothing), no script error, no dialog.
    expect(problems).toEqual([]);
    expect(dialogs).toEqual([]);
  });

  it('drops an answer that comes back after the user ticked a box while it was on its way', async () => {
    const { accountId } = await agencyWithUser(world, 'In Flight Agency', 'owner@in-flight.example');
    const storage = storageOf(world.prisma);
    const agent = await createAgent(storage, { accountId, name: 'Front desk', phone: '+14155550100', now: new Date() });
    await setDefaultAgent(storage, accountId, agent.id, undefined, new Date());
    const { key } = await generateKey(storage, accountId, undefined, { now: new Date() });
    const { page } = await signIn(world, 'owner@in-flight.example');
    const ids: string[] = [];
    for (const phone of ['+14155552681', '+14155552682']) {
      const res = await apiTrigger(world, key, { phone_number: phone });
      expect(res.status).toBe(200);
      ids.push(res.body.call_id as string);
    }
    const [canceled, ticked] = ids as [string, string];
    // The next refresh is held on its way until the box is ticked; the call is canceled first, so its answer would
    // show the change (and an unticked box) if it were swapped in.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const heldNow = new Promise<void>((resolve) => (held = resolve));
    await page.route('**/dashboard/calls**', async (route) => {
      if (route.request().headers()['hx-request'] === 'true') {
        held();
        await released;
      }
      await route.continue();
    });
    await page.goto('/dashboard/calls');
    const row = (id: string) => `#live table tr:has(a[href="/dashboard/calls/${id}"])`;
    await heldNow;
    await cancelCall(storage, canceled, { kind: 'operator' }, new Date());
    await page.check(`input[name=call][value="${ticked}"]`);
    await page.click('h1');
    release();
    await page.waitForFunction(() => {
      const region = (globalThis as unknown as Probe).document.querySelector('#live');
      return region?.getAttribute('data-live-paused') === 'form';
    });
    expect(await page.isChecked(`input[name=call][value="${ticked}"]`)).toBe(true);
    expect(await page.textContent(row(canceled))).toContain('Waiting');
    await page.unroute('**/dashboard/calls**');
    // Unticked, the next refresh shows the change.
    await page.uncheck(`input[name=call][value="${ticked}"]`);
    await page.click('h1');
    await waitForText(page, row(canceled), 'Failed: canceled');
  });
});
