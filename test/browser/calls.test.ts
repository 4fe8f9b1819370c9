// Calls, agents and the overview in a real browser (issue 15, point 6): a call triggered through the API followed in
// the dashboard from waiting (for a free slot) to completed, with its metadata as sent (key order, types, markup as
// text) and its webhook deliveries; an agent made in the Agents page with a window closed now and policy reject, set
// as default, refused by the API; switched to queue, its call waiting for the window in the Overview.
import { beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { errorMessage } from '../../src/errors.js';
import { json } from '../helpers/json.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import {
  agencyWithUser,
  apiTrigger,
  chromiumAvailable,
  reloadUntil,
  signIn,
  startBrowserWorld,
  submit,
  type BrowserWorld,
} from './browser.js';

const available = chromiumAvailable();
const HOSTILE = `<script>alert('meta')</script><img src=x onerror=alert(3)>`;
// Key order on purpose not alphabetical; a string that looks like a number; every type a value may have.
const METADATA = {
  zeta: HOSTILE,
  alpha: 42,
  text_number: '42',
  flag: true,
  text_flag: 'true',
  nothing: null,
  ratio: -0.5,
};

let world: BrowserWorld;
let receiver: Receiver;

/** HH:MM in UTC, `hours` from now. */
function utcClock(hours: number): string {
  return new Date(Date.now() + hours * 3_600_000).toISOString().slice(11, 16);
}

// A real browser and a real server on a busy 2-core machine: each test gets a minute.
describe.skipIf(!available)('calls, agents and the overview in chromium', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    receiver = await startReceiver();
    // One call at a time per account: a second call waits for the first to end, long enough to be seen waiting.
    world = await startBrowserWorld({
      DISPATCH_ENABLED: 'true',
      MAX_CONCURRENT_CALLS: '1',
      SIMULATED_RING_MS: '300',
      SIMULATED_TALK_MS: '3000',
      WEBHOOK_DELIVERY_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
  }, 90_000);

  it('follows a triggered call from waiting to completed, with its metadata as sent and its deliveries', async () => {
    const { accountId } = await agencyWithUser(world, 'Follow Agency', 'owner@follow.example');
    const agent = await createAgent(world.prisma, { accountId, name: 'Front desk', phone: '+14155550100' });
    await setDefaultAgent(world.prisma, accountId, agent.id);
    const { key } = await generateKey(world.prisma, accountId);
    await setWebhook(world.prisma, accountId, receiver.url, { allowPrivate: true });
    const { page, dialogs } = await signIn(world, 'owner@follow.example');

    expect((await apiTrigger(world, key, { phone_number: '+14155552671' })).status).toBe(200);
    const second = await apiTrigger(world, key, {
      phone_number: '+14155552672',
      name: `Zoë "${HOSTILE}"`,
      email: 'zoe@example.com',
      metadata: METADATA,
    });
    expect(second.status).toBe(200);
    const callId = second.body.call_id as string;

    // Waiting for the slot the first call holds.
    await page.goto('/dashboard/calls');
    expect(await page.textContent(`table tr:has(a[href="/dashboard/calls/${callId}"])`)).toContain('Waiting');
    await page.click(`a[href="/dashboard/calls/${callId}"]`);
    await page.waitForURL(`**/dashboard/calls/${callId}`);
    expect(await page.textContent('h1')).toBe('Call to +14155552672');
    expect(await page.textContent('dl.facts .status')).toBe('Waiting');
    expect(await page.textContent('dl.facts')).toContain(`Zoë "${HOSTILE}"`);

    const facts = await reloadUntil(page, 'dl.facts .status', (text) => text === 'Completed', 20_000);
    expect(facts).toBe('Completed');
    const timeline = await page.locator('ol.timeline li strong').allTextContents();
    expect(timeline).toEqual(['Accepted', 'Queued for a free slot', 'Dialling', 'Answered', 'Completed']);
    expect(await page.textContent('ol.timeline')).toMatch(/waited \d+ s/);

    // Metadata: the keys in the order sent, strings told apart from numbers, true/false and null; markup as text.
    const rows = await page
      .locator('table.metadata tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          Array.from(
            (tr as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells,
            (td) => td.textContent,
          ),
        ),
      );
    expect(rows).toEqual([
      ['zeta', HOSTILE, 'text'],
      ['alpha', '42', 'number'],
      ['text_number', '42', 'text'],
      ['flag', 'true', 'true/false'],
      ['text_flag', 'true', 'text'],
      ['nothing', 'null', 'null'],
      ['ratio', '-0.5', 'number'],
    ]);
    expect(JSON.parse((await page.textContent('pre.json code'))!)).toEqual(METADATA);
    expect(Object.keys(json<object>((await page.textContent('pre.json code'))!))).toEqual(Object.keys(METADATA));

    // Its deliveries: started and completed, each delivered on its first attempt, with the ids the receiver got.
    const deliveries = page.locator('article.delivery');
    await reloadUntil(page, 'main', (text) => (text.match(/delivered/g) ?? []).length >= 2);
    expect(await deliveries.locator('h3 code').allTextContents()).toEqual(['call.started', 'call.completed']);
    expect(await deliveries.locator('h3 .status').allTextContents()).toEqual(['delivered', 'delivered']);
    expect(await deliveries.locator('table.attempts tbody td:nth-child(3)').allTextContents()).toEqual(['200', '200']);
    const shownIds = await deliveries.locator('p.hint code').allTextContents();
    const receivedIds = receiver.received.filter((r) => r.body.includes(callId)).map((r) => r.headers['webhook-id']);
    expect(new Set(receivedIds)).toEqual(new Set(shownIds));
    expect(await deliveries.locator('button:has-text("Resend")').count()).toBe(2);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it("refuses a trigger outside a rejecting agent's window; switched to queue, the call waits in the overview", async () => {
    const { accountId } = await agencyWithUser(world, 'Window Agency', 'owner@window.example');
    const { key } = await generateKey(world.prisma, accountId);
    const { page, dialogs } = await signIn(world, 'owner@window.example');
    const from = utcClock(2);
    const to = utcClock(3);

    await page.goto('/dashboard/agents');
    await submit(page, 'a:has-text("New agent")');
    await page.fill('input[name=name]', 'Night <b>shift</b>');
    await page.fill('input[name=phone]', '+14155550123');
    expect(await page.inputValue('select[name=timezone]')).toBe('UTC');
    await page.selectOption('select[aria-label="Days of window 1"]', 'daily');
    await page.fill('input[aria-label="From, window 1"]', from);
    await page.fill('input[aria-label="To, window 1"]', to);
    await page.check('input[name=policy][value=reject]');
    await submit(page, 'button:has-text("Create agent")');
    expect(page.url()).toMatch(/\/dashboard\/agents$/);
    expect(await page.textContent('[role=status]')).toBe('Agent Night <b>shift</b> created.');
    const row = page.locator('table.agents tbody tr', { hasText: 'Night <b>shift</b>' });
    expect(await row.textContent()).toContain(`daily ${from}-${to}`);
    expect(await row.textContent()).toContain('Reject the trigger');

    await Promise.all([page.waitForNavigation(), row.locator('button:has-text("Set as default")').click()]);
    expect(await page.textContent('[role=status]')).toBe(
      'Night <b>shift</b> is now the default agent of Window Agency.',
    );
    expect(await row.locator('strong.default').textContent()).toBe('Default');

    expect(await apiTrigger(world, key)).toEqual({
      status: 400,
      body: { success: false, error: errorMessage('OUTSIDE_CALLING_WINDOW') },
    });
    expect(errorMessage('OUTSIDE_CALLING_WINDOW')).toBe("Outside the agent's calling window");

    await Promise.all([page.waitForNavigation(), row.locator('a').click()]);
    await page.check('input[name=policy][value=queue]');
    await submit(page, 'button:has-text("Save")');
    expect(await page.textContent('[role=status]')).toBe('Agent Night <b>shift</b> saved.');
    expect(await row.textContent()).toContain('Queue until the window opens');

    const queued = await apiTrigger(world, key);
    expect(queued.status).toBe(200);
    await page.goto('/dashboard');
    const overview = page.locator('#calls-now tbody tr', { hasText: 'Window Agency' });
    expect(await overview.locator('td').allTextContents()).toEqual(['0 of 1', '1', '1', '0', '0']);

    await page.goto(`/dashboard/calls/${queued.body.call_id as string}`);
    expect(await page.textContent('dl.facts .status')).toBe('Waiting');
    const timeline = await reloadUntil(page, 'ol.timeline', (text) =>
      text.includes('Queued until the calling window opens'),
    );
    expect(timeline).toContain('still waiting');
    expect(await page.locator('b').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });
});
