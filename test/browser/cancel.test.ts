// Cancelling waiting calls in a real browser (issue 23, point 5): "Cancel this call" on a waiting call's detail view
// (the receiver gets its call.failed, reason canceled; the page no longer offers the button), and a ticked call
// cancelled from the Calls list. The dispatcher is off, so triggered calls wait.
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
    expect(await page.textContent('.notice.ok')).toBe('1 call canceled (they will not be dialled).');
    expect(await page.textContent(`table tr:has(a[href="/dashboard/calls/${second}"])`)).toContain('Failed: canceled');
    expect(await page.textContent(`table tr:has(a[href="/dashboard/calls/${third}"])`)).toContain('Waiting');
    expect(dialogs).toEqual([]);
  });
});
