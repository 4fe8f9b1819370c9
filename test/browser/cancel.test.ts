// Cancelling waiting calls in a real browser (issue 23, point 5): "Cancel this call" on a waiting call's detail view
// (the receiver gets its call.failed, reason canceled; the page no longer offers the button), and a ticked call
// cancelled from the Calls list. Each asks first on a page of its own (how many, cannot be undone), with and without
// JavaScript; the list comes back as it was filtered (issue 45, points 19 and 21). The dispatcher is off, so
// triggered calls wait.
import { beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { storageOf } from '../helpers/database.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/wait.js';
import {
  agencyWithUser,
  apiTrigger,
  chromiumAvailable,
  PASSWORD,
  signIn,
  startBrowserWorld,
  submit,
  type BrowserWorld,
} from './browser.js';

const available = chromiumAvailable();
let world: BrowserWorld;
let receiver: Receiver;

describe.skipIf(!available)('cancelling waiting calls in chromium', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    receiver = await startReceiver();
    world = await startBrowserWorld({
      DISPATCH_ENABLED: 'false',
      WEBHOOK_DELIVERY_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
  }, 90_000);

  it('cancels a waiting call from its detail view, and ticked calls from the Calls list', async () => {
    const { accountId } = await agencyWithUser(world, 'Cancel Agency', 'owner@cancel.example');
    const storage = storageOf(world.prisma);
    const agent = await createAgent(storage, { accountId, name: 'Front desk', phone: '+14155550100', now: new Date() });
    await setDefaultAgent(storage, accountId, agent.id, undefined, new Date());
    const { key } = await generateKey(storage, accountId, undefined, { now: new Date() });
    await setWebhook(storage, accountId, receiver.url, { allowPrivate: true, now: new Date() });
    const { page, dialogs } = await signIn(world, 'owner@cancel.example');

    const ids: string[] = [];
    for (const phone of ['+14155552671', '+14155552672', '+14155552673']) {
      const res = await apiTrigger(world, key, { phone_number: phone });
      expect(res.status).toBe(200);
      ids.push(res.body.call_id as string);
    }
    const [first, second, third] = ids as [string, string, string];

    await page.goto(`/dashboard/calls/${first}`);
    expect(await page.textContent('dl.facts .status')).toBe('Waiting');
    await submit(page, 'button:has-text("Cancel this call")');
    // Asked first, on a page of its own: which call, and that it cannot be undone. "Keep it waiting" changes nothing.
    expect(await page.textContent('h1')).toBe('Cancel the call to +14155552671?');
    expect(await page.textContent('form.cancel-confirm')).toContain('This cannot be undone.');
    await submit(page, 'a:has-text("Keep it waiting")');
    expect(page.url()).toMatch(new RegExp(`/dashboard/calls/${first}$`));
    expect(await page.textContent('dl.facts .status')).toBe('Waiting');
    await submit(page, 'button:has-text("Cancel this call")');
    await submit(page, 'button:has-text("Cancel the call")');
    expect(page.url()).toMatch(new RegExp(`/dashboard/calls/${first}$`));
    expect(await page.textContent('.notice.ok')).toContain('The call is canceled: it will not be dialled.');
    expect(await page.textContent('dl.facts .status')).toBe('Failed');
    expect(await page.textContent('dl.facts')).toContain('Canceled');
    expect(await page.locator('button:has-text("Cancel this call")').count()).toBe(0);
    // Accepted, then (if the cancel came two seconds or more after it, as on a slow machine) the wait, then the end.
    const steps = await page.locator('ol.timeline li strong').allTextContents();
    expect(steps.filter((s) => s !== 'Queued for a free slot')).toEqual(['Accepted', 'Failed: Canceled']);
    // The receiver gets the call's one terminal event.
    const received = await waitFor(
      () => receiver.received.filter((r) => r.body.includes(first)),
      (list) => list.length > 0,
    );
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!.body)).toMatchObject({
      type: 'call.failed',
      data: { call_id: first, status: 'failed', failure_reason: 'canceled' },
    });

    // From the list: a box for each waiting call (not for the canceled one); tick one, cancel it.
    await page.goto('/dashboard/calls');
    expect(await page.locator(`input[name=call][value="${first}"]`).count()).toBe(0);
    await page.check(`input[name=call][value="${second}"]`);
    await submit(page, 'button:has-text("Cancel selected calls")');
    expect(await page.textContent('h1')).toBe('Cancel 1 call?');
    await submit(page, 'button:has-text("Cancel 1 call")');
    expect(await page.textContent('.notice.ok')).toBe('1 call canceled (they will not be dialled).');
    expect(await page.textContent(`table tr:has(a[href="/dashboard/calls/${second}"])`)).toContain('Failed: canceled');
    expect(await page.textContent(`table tr:has(a[href="/dashboard/calls/${third}"])`)).toContain('Waiting');
    expect(dialogs).toEqual([]);
  });

  it('asks how many before cancelling ticked calls, without JavaScript too, and comes back to the filtered list', async () => {
    const { accountId } = await agencyWithUser(world, 'Filtered Agency', 'owner@filtered.example');
    const storage = storageOf(world.prisma);
    const agent = await createAgent(storage, { now: new Date(), accountId, name: 'Desk', phone: '+14155550100' });
    await setDefaultAgent(storage, accountId, agent.id, undefined, new Date());
    const { key } = await generateKey(storage, accountId, undefined, { now: new Date() });
    const ids: string[] = [];
    for (const phone of ['+14155553001', '+14155553002', '+14155553003', '+14155554001']) {
      const res = await apiTrigger(world, key, { phone_number: phone });
      expect(res.status).toBe(200);
      ids.push(res.body.call_id as string);
    }
    const filtered = '/dashboard/calls?status=initiated&number=%2B141555530';
    for (const javaScript of [false, true]) {
      const { page, dialogs } = await signIn(world, 'owner@filtered.example', PASSWORD, {
        javaScriptEnabled: javaScript,
      });
      await page.goto(filtered);
      const boxes = page.locator('input[type=checkbox][name=call]');
      expect(await boxes.count()).toBe(javaScript ? 1 : 3);
      for (let i = 0; i < (await boxes.count()) && i < 2; i++) await boxes.nth(i).check();
      const ticked = javaScript ? 1 : 2;
      await submit(page, 'button:has-text("Cancel selected calls")');
      expect(await page.textContent('h1')).toBe(`Cancel ${ticked === 1 ? '1 call' : `${ticked} calls`}?`);
      expect(await page.textContent('form.cancel-confirm')).toContain('This cannot be undone.');
      await submit(page, `button:has-text("Cancel ${ticked === 1 ? '1 call' : `${ticked} calls`}")`);
      // Back on the list as it was filtered: the same filters in the address and in the form.
      const url = new URL(page.url());
      expect(url.pathname).toBe('/dashboard/calls');
      expect(Object.fromEntries(url.searchParams)).toEqual({ status: 'initiated', number: '+141555530' });
      expect(await page.inputValue('select[name=status]')).toBe('initiated');
      expect(await page.inputValue('input[name=number]')).toBe('+141555530');
      expect(await page.textContent('.notice.ok')).toBe(
        `${ticked === 1 ? '1 call' : `${ticked} calls`} canceled (they will not be dialled).`,
      );
      expect(dialogs).toEqual([]);
      await page.context().close();
    }
    // The number outside the filter was never offered, and still waits.
    const untouched = await world.prisma.call.findUniqueOrThrow({ where: { id: ids[3]! } });
    expect(untouched.status).toBe('initiated');
  });
});
