// Calls, agents and the overview in a real browser (issue 15, point 6): a call triggered through the API followed in
// the dashboard from waiting (for a free slot) to completed, with its metadata as sent (key order, types, markup as
// text) and its webhook deliveries; an agent made in the Agents page with a window closed now and policy reject, set
// as default, refused by the API; switched to queue, its call waiting for the window in the Overview. The Calls list
// (issue 24, point 1): its columns and badges, each search through the filters form, and the metadata column a user
// chooses, kept across sign-ins; each call's attempts, a machine's answer and whose zone a waiting call's window is
// read in (issue 23, point 7), without widening the table.
import { beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { errorMessage } from '../../schemas/error-codes.js';
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
import { storageOf } from '../helpers/database.js';
import { createClient } from '../../src/admin/accounts.js';
import { insertCalls, forceAgent, forceCall, insertCallRow } from '../helpers/seed.js';

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
    const agent = await createAgent(storageOf(world.prisma), {
      accountId,
      name: 'Front desk',
      phone: '+14155550100',
      now: new Date(),
    });
    await setDefaultAgent(storageOf(world.prisma), accountId, agent.id, undefined, new Date());
    const { key } = await generateKey(storageOf(world.prisma), accountId, undefined, { now: new Date() });
    await setWebhook(storageOf(world.prisma), accountId, receiver.url, { allowPrivate: true, now: new Date() });
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
    const { key } = await generateKey(storageOf(world.prisma), accountId, undefined, { now: new Date() });
    const { page, dialogs } = await signIn(world, 'owner@window.example');
    const from = utcClock(2);
    const to = utcClock(3);

    await page.goto('/dashboard/agents');
    await submit(page, 'a:has-text("New agent")');
    await page.fill('input[name=name]', 'Night <b>shift</b>');
    await page.fill('input[name=phone]', '+14155550123');
    expect(await page.inputValue('select[name=timezone]')).toBe('UTC');
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'])
      await page.check(`#f-w0-days input[aria-label=${day}]`);
    await page.fill('#f-w0-from', from);
    await page.fill('#f-w0-to', to);
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
    // Active, waiting, of them for a window, scheduled, waiting for a retry, completed and failed today.
    expect(await overview.locator('td').allTextContents()).toEqual(['0 of 1', '1', '1', '0', '0', '0', '0']);

    await page.goto(`/dashboard/calls/${queued.body.call_id as string}`);
    expect(await page.textContent('dl.facts .status')).toBe('Waiting');
    const timeline = await reloadUntil(page, 'ol.timeline', (text) =>
      text.includes('Queued until the calling window opens'),
    );
    expect(timeline).toContain('still waiting');
    expect(await page.locator('b').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('lists calls with badges, searches them by number, name, metadata and id, and keeps a metadata column', async () => {
    const { accountId } = await agencyWithUser(world, 'Search Agency', 'owner@search.example');
    const { id: clientId } = await createClient(storageOf(world.prisma), {
      agencyId: accountId,
      name: 'Client Co',
      now: new Date(),
    });
    const agent = await createAgent(storageOf(world.prisma), {
      accountId,
      name: 'Desk',
      phone: '+14155550100',
      now: new Date(),
    });
    const clientAgent = await createAgent(storageOf(world.prisma), {
      accountId: clientId,
      name: 'Client desk',
      phone: '+14155550100',
      now: new Date(),
    });
    const made = async (
      tenant: { accountId: string; agentId: string },
      phone: string,
      name: string,
      metadata: string,
      minutesAgo: number,
      status: 'completed' | 'failed' = 'completed',
    ) => {
      const [id] = await insertCalls(world.prisma, {
        ...tenant,
        count: 1,
        createdAt: new Date(Date.now() - minutesAgo * 60_000),
        phoneNumber: phone,
        metadataJson: metadata,
        status,
      });
      await forceCall(world.prisma, id!, { name });
      return id!;
    };
    const own = { accountId, agentId: agent.id };
    const jane = await made(own, '+14155550001', 'Jane Doe', '{"crm_id":123}', 30);
    const jim = await made(own, '+12125550002', 'Jim Beam', '{"crm_id":"abc"}', 20, 'failed');
    const roe = await made(
      { accountId: clientId, agentId: clientAgent.id },
      '+14155550003',
      'jane Roe',
      '{"crm_id":"123"}',
      10,
    );
    const waiting = (
      await insertCallRow(world.prisma, {
        accountId,
        agentId: agent.id,
        phoneNumber: '+442071234567',
        fromNumber: '+14155550100',
        name: 'Later Person',
        notBefore: new Date('2058-01-07T14:00:00Z'),
        expiresAt: new Date('2058-01-08T14:00:00Z'),
        timezone: 'America/New_York',
      })
    ).id;
    const { page, dialogs } = await signIn(world, 'owner@search.example');
    await page.goto('/dashboard/calls');

    expect(await page.locator('table.rows thead th').allTextContents()).toEqual([
      'Select',
      'Number',
      'Name',
      'Agent',
      'Client',
      'Status',
      'Duration',
      'Created',
    ]);
    const row = (id: string) => page.locator(`table.rows tbody tr:has(a[href="/dashboard/calls/${id}"])`);
    const cell = (id: string, label: string) => row(id).locator(`td[data-label="${label}"]`).textContent();
    expect(await cell(jane, 'Name')).toBe('Jane Doe');
    expect(await cell(jane, 'Client')).toBe('Search Agency (own)');
    expect(await cell(roe, 'Client')).toBe('Client Co');
    expect(await row(jane).locator('.badge[data-tone=ok]').textContent()).toBe('Completed');
    expect(await row(jim).locator('.badge[data-tone=bad]').textContent()).toBe('Failed: busy');
    expect(await row(waiting).locator('.badge[data-tone=wait]').textContent()).toBe(
      'Waiting for the window until 7 Jan, 09:00 America/New_York',
    );
    // Every body cell is labelled (the stacked rows of a phone read the labels); the number is the row's link.
    expect(await page.locator('table.rows tbody td:not([data-label])').count()).toBe(0);
    expect(await row(roe).locator('td.primary a').textContent()).toBe('+14155550003');

    // The filters fold away until one is set; each search through the form, without script.
    const panel = page.locator('details.filters-panel:not(.calls-export)');
    expect(await panel.getAttribute('open')).toBeNull();
    const searchFor = async (fields: Record<string, string>) => {
      // Closed, the panel's summary opens it (on a wide screen the filters show without it: no summary to click).
      const summary = page.locator('details.filters-panel:not(.calls-export) > summary');
      if ((await panel.getAttribute('open')) === null && (await summary.isVisible())) await summary.click();
      for (const name of ['number', 'name', 'meta_key', 'meta_value', 'call'])
        await page.fill(`form.filters input[name=${name}]`, fields[name] ?? '');
      await submit(page, 'form.filters button:has-text("Filter")');
      expect(await panel.getAttribute('open')).not.toBeNull();
      const links = await page.locator('table.rows tbody td.primary a').all();
      return Promise.all(links.map(async (a) => (await a.getAttribute('href'))!.split('/').pop()!));
    };
    expect(await searchFor({ number: '+1 415' })).toEqual([roe, jane]);
    expect(await searchFor({ name: 'JANE' })).toEqual([roe, jane]);
    expect(await searchFor({ name: 'jim b' })).toEqual([jim]);
    expect(await searchFor({ meta_key: 'crm_id', meta_value: '123' })).toEqual([roe, jane]);
    expect(await searchFor({ meta_key: 'crm_id', meta_value: 'abc' })).toEqual([jim]);
    expect(await searchFor({ call: roe })).toEqual([roe]);
    expect(await searchFor({ number: '+1415', name: 'jane d' })).toEqual([jane]);
    await submit(page, `a[href="/dashboard/calls/${jane}"]`);
    expect(await page.textContent('h1')).toBe('Call to +14155550001');

    // A metadata key as a column: chosen once, kept for this user after signing in again.
    await page.goto('/dashboard/calls?name=jane');
    await page.fill('input[name=column]', 'crm_id');
    await submit(page, 'button:has-text("Show column")');
    expect(page.url()).toMatch(/\/dashboard\/calls\?name=jane$/);
    expect(await page.textContent('[role=status]')).toContain('The metadata key "crm_id" is shown as a column.');
    expect(await page.locator('table.rows thead th').allTextContents()).toContain('crm_id');
    expect(await cell(jane, 'crm_id')).toBe('123');
    expect(await cell(roe, 'crm_id')).toBe('123');
    const again = await signIn(world, 'owner@search.example');
    await again.page.goto('/dashboard/calls');
    expect(
      await again.page
        .locator(`table.rows tbody tr:has(a[href="/dashboard/calls/${jim}"]) td[data-label="crm_id"]`)
        .textContent(),
    ).toBe('abc');
    expect(await again.page.inputValue('input[name=column]')).toBe('crm_id');
    expect(dialogs).toEqual([]);
  });

  it("shows each call's attempts, a machine's answer and whose zone its window is read in, within the screen's width", async () => {
    const { accountId } = await agencyWithUser(world, 'Northwind Growth Partners', 'owner@attempts.example');
    const { id: clientId } = await createClient(storageOf(world.prisma), {
      agencyId: accountId,
      name: 'Bayside Family Dental',
      now: new Date(),
    });
    const agent = await createAgent(storageOf(world.prisma), {
      accountId: clientId,
      name: 'Bayside front desk (reminders)',
      phone: '+14155550100',
      now: new Date(),
    });
    await forceAgent(world.prisma, agent.id, { maxAttempts: 3, retryOn: ['busy', 'no_answer'] });
    const base = {
      accountId: clientId,
      agentId: agent.id,
      fromNumber: '+14155550100',
      name: 'Alexandra Montgomery-Whitfield',
      expiresAt: new Date('2058-01-10T14:00:00Z'),
    };
    // Waiting for attempt 3 (not due before 2058: the dispatcher leaves them all alone).
    const retrying = await insertCallRow(world.prisma, {
      ...base,
      phoneNumber: '+14155550301',
      attempt: 3,
      nextAttemptAt: new Date('2058-01-08T17:00:00Z'),
      notBefore: new Date('2058-01-08T17:00:00Z'),
      timezone: 'America/Los_Angeles',
      timezoneSource: 'country',
      attemptOutcomes: [
        { attempt: 1, outcome: 'busy', at: '2058-01-07T17:00:00.000Z' },
        { attempt: 2, outcome: 'no_answer', at: '2058-01-07T17:31:00.000Z' },
      ],
    });
    // Waiting for the window, read in the callee's zone given by the trigger.
    const window = await insertCallRow(world.prisma, {
      ...base,
      phoneNumber: '+14155550302',
      notBefore: new Date('2058-01-07T17:00:00Z'),
      timezone: 'America/Los_Angeles',
      timezoneSource: 'request',
    });
    // Scheduled for Saturday 09:30 in the agent's zone, outside its weekday window: first dialled Monday 08:00.
    const scheduled = await insertCallRow(world.prisma, {
      ...base,
      phoneNumber: '+14155550304',
      scheduledAt: new Date('2030-01-05T17:30:00Z'),
      notBefore: new Date('2030-01-07T16:00:00Z'),
      timezone: 'America/Los_Angeles',
      timezoneSource: 'agent',
    });
    // On a machine now (no provider id: the simulated dialer does not move it), after a voicemail on attempt 1.
    const machine = await insertCallRow(world.prisma, {
      ...base,
      phoneNumber: '+14155550303',
      status: 'in_progress',
      attempt: 2,
      notBefore: new Date(),
      startedAt: new Date(),
      answeredAt: new Date(),
      answeredBy: 'machine',
      timezone: 'America/Los_Angeles',
      timezoneSource: 'agent',
      attemptOutcomes: [{ attempt: 1, outcome: 'voicemail', at: '2058-01-07T17:00:00.000Z' }],
    });
    // Ended on a machine: its badge says so, no second word for it.
    const [voicemail] = await insertCalls(world.prisma, {
      accountId: clientId,
      agentId: agent.id,
      count: 1,
      createdAt: new Date(Date.now() - 60_000),
      status: 'failed',
    });
    await forceCall(world.prisma, voicemail!, {
      failureReason: 'voicemail',
      answeredBy: 'machine',
      voicemailLeft: true,
      attemptOutcomes: [{ attempt: 1, outcome: 'voicemail', at: new Date().toISOString() }],
    });
    const { page, dialogs } = await signIn(world, 'owner@attempts.example');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto('/dashboard/calls');
    const row = (id: string) => page.locator(`table.rows tbody tr:has(a[href="/dashboard/calls/${id}"])`);
    const status = (id: string) => row(id).locator('td[data-label="Status"]');

    expect(await status(retrying.id).locator('.badge').textContent()).toBe(
      'Retrying at 8 Jan, 09:00 America/Los_Angeles',
    );
    const attempts = status(retrying.id).locator('.call-facts span[title]');
    expect(await attempts.textContent()).toBe('Attempt 3 of 3: busy, no answer');
    expect(await attempts.getAttribute('title')).toBe(
      'Attempt 1: busy, 2058-01-07 17:00:00 UTC (Mon 09:00 America/Los_Angeles); ' +
        'Attempt 2: no answer, 2058-01-07 17:31:00 UTC (Mon 09:31 America/Los_Angeles)',
    );
    const windowBadge = status(window.id).locator('.badge');
    expect(await windowBadge.textContent()).toBe(
      "Waiting for the window until 7 Jan, 09:00 (callee's zone, America/Los_Angeles)",
    );
    expect(await windowBadge.getAttribute('title')).toBe(
      "Calling hours read in America/Los_Angeles: the callee's, given by the trigger (recipient_timezone)",
    );
    expect(await status(window.id).locator('.call-facts').textContent()).toBe('Attempt 1 of 3');
    // The earliest dial, as the call's page names it: the window's opening after the schedule, not the schedule.
    const scheduledBadge = status(scheduled.id).locator('.badge');
    expect(await scheduledBadge.textContent()).toBe(
      "Scheduled; the window opens 7 Jan, 08:00 (agent's zone, America/Los_Angeles)",
    );
    expect(await scheduledBadge.getAttribute('title')).toBe(
      "Scheduled for 5 Jan, 09:30 America/Los_Angeles, outside the calling window. Calling hours read in America/Los_Angeles: the agent's",
    );
    expect(await status(machine.id).locator('.call-facts').textContent()).toBe('Attempt 2 of 3: voicemail · Voicemail');
    expect(await status(voicemail!).locator('.badge').textContent()).toBe('Failed: reached voicemail');
    expect(await status(voicemail!).locator('.call-facts').textContent()).toBe('Attempt 1 of 3: voicemail');

    // The widest rows of the list (a client column, the select column, long names and badges) fit the screen.
    for (const size of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(size);
      const sideways = await page.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      expect(sideways, `${size.width} px`).toBe(0);
      const outside = await page.evaluate<string[]>(`Array.from(
        document.querySelectorAll('table.rows td .badge, table.rows td .call-facts'))
          .filter((el) => el.getBoundingClientRect().right > el.closest('td').getBoundingClientRect().right + 0.5)
          .map((el) => el.textContent)`);
      expect(outside, `${size.width} px`).toEqual([]);
    }
    await page.goto(`/dashboard/calls/${scheduled.id}`);
    expect(await page.textContent('dd.waiting')).toBe(
      'Scheduled for 2030-01-05 17:30:00 UTC (Sat 09:30 America/Los_Angeles); then the calling window, which opens ' +
        '2030-01-07 16:00:00 UTC (Mon 08:00 America/Los_Angeles)',
    );
    expect(dialogs).toEqual([]);
  });
});
