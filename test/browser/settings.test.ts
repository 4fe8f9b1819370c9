// Settings → API & Webhooks in a real browser (issue 14, point 7): a key generated and shown once (gone on reload and
// on Back) that then triggers a call on the real HTTPS port; the API-access switch refusing and accepting that key; a
// webhook URL with its signing secret shown once (and proven to be the one that signs); a delivery that failed, sent
// again from the delivery log with the same webhook-id; and a client's name with markup shown as text.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createAgent } from '../../src/admin/agents.js';
import { errorMessage } from '../../schemas/error-codes.js';
import { startReceiver, type Receiver, type Received } from '../helpers/receiver.js';
import {
  agencyWithUser,
  apiTrigger,
  chromiumAvailable,
  reloadUntil,
  signIn,
  startBrowserWorld,
  submit,
  type BrowserWorld,
  type SignedIn,
} from './browser.js';
import { storageOf } from '../helpers/database.js';

const available = chromiumAvailable();
const SETTINGS = '/dashboard/settings/api-webhooks';
const WEBHOOK_SECTION = 'section[aria-labelledby=webhook-heading]';

let world: BrowserWorld;
let receiver: Receiver;
let owner: SignedIn;
let key = '';
let frontDesk = '';
/** A delivery the receiver got and the secret it is signed with (from the webhook test, for the snippet's). */
let signed: { secret: string; delivery: Received } | null = null;

// A real browser and a real server on a busy 2-core machine: each test gets a minute.
describe.skipIf(!available)('Settings → API & Webhooks in chromium', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    receiver = await startReceiver();
    world = await startBrowserWorld({
      DISPATCH_ENABLED: 'true',
      SIMULATED_RING_MS: '50',
      SIMULATED_TALK_MS: '100',
      WEBHOOK_DELIVERY_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    const { accountId } = await agencyWithUser(world, 'Keys & Hooks Agency', 'owner@keys.example');
    ({ id: frontDesk } = await createAgent(storageOf(world.prisma), {
      accountId,
      name: 'Front desk',
      phone: '+14155550100',
      now: new Date(),
    }));
    owner = await signIn(world, 'owner@keys.example');
  }, 90_000);

  it('generates a key shown once: not on reload, not on Back', async () => {
    const page = await owner.page.context().newPage();
    await page.goto(SETTINGS);
    expect(await page.textContent('section[aria-labelledby=key-heading]')).toContain('No key yet.');
    await page.click('section[aria-labelledby=key-heading] a.button');
    await page.waitForURL(`**${SETTINGS}/key`);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`${SETTINGS}/key`) && r.request().method() === 'POST'),
      page.click('main button[type=submit]'),
    ]);
    expect(answer.status()).toBe(200);
    expect(answer.headers()['cache-control']).toContain('no-store');
    expect(await page.textContent('[role=status]')).toContain('A new API key is generated.');
    key = await page.inputValue('#secret-value');
    expect(key.length).toBeGreaterThan(30);

    // Reload of the POST's answer: the same form sent again makes no second key and shows none.
    await page.reload();
    expect(await page.content()).not.toContain(key);
    expect(await page.textContent('main')).toContain('This key was already shown');

    // The settings page shows the prefix only; Back to the answer shows no key either.
    await page.goto(SETTINGS);
    const prefix = (await page.textContent('section[aria-labelledby=key-heading] dd code'))!.replace('…', '');
    expect(key.startsWith(prefix)).toBe(true);
    expect(await page.content()).not.toContain(key);
    // Chromium does not show a no-store answer to a POST from its cache: it would have to send the form again.
    const back = await page.goBack().then(
      () => 'shown from history',
      (error: Error) => error.message,
    );
    expect(back).toContain('net::ERR_CACHE_MISS');
    await page.waitForURL(/^chrome-error:/);
    await page.waitForLoadState();
    expect(await page.textContent('body')).not.toContain(key);
    await page.close();
  });

  it('the key triggers a call over HTTPS; API access off refuses it with 403, on again accepts it', async () => {
    expect(key).not.toBe('');
    const { page } = owner;
    await page.goto(SETTINGS);
    await page.selectOption('select[name=agent_id]', { label: `Front desk · +14155550100 · id ${frontDesk}` });
    await Promise.all([
      page.waitForURL(`**${SETTINGS}`),
      page.click('section[aria-labelledby=agent-heading] button[type=submit]'),
    ]);
    expect(await page.textContent('[role=status]')).toContain('The default agent is set');

    expect(await apiTrigger(world, key)).toMatchObject({ status: 200, body: { success: true } });

    // Asked first, on a page of its own (issue 21, point 10).
    await submit(page, 'button:has-text("Switch API access off")');
    expect(await page.textContent('h1')).toBe('Switch API access off?');
    await submit(page, 'button:has-text("Yes, switch API access off")');
    expect(await page.textContent('[role=status]')).toContain('API access is off');
    expect(await page.textContent('section[aria-labelledby=access-heading] strong')).toBe('off');
    expect(await apiTrigger(world, key)).toEqual({
      status: 403,
      body: { success: false, error: errorMessage('API_ACCESS_DISABLED') },
    });

    await submit(page, 'button:has-text("Switch API access on")');
    expect(await page.textContent('[role=status]')).toBe('API access is on.');
    expect(await apiTrigger(world, key)).toMatchObject({ status: 200, body: { success: true } });
  });

  it("shows each agent's id as selectable text, and its Copy button puts the id on the clipboard (issue 21, point 9)", async () => {
    const { page } = owner;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto('/dashboard/agents');
    expect(await page.textContent(`#agent-id-${frontDesk}`)).toBe(frontDesk);
    const button = page.locator(`button[data-copy="agent-id-${frontDesk}"]`);
    expect(await button.isVisible()).toBe(true);
    await button.click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(frontDesk);
    expect(await button.textContent()).toBe('Copied');
    // No script reached the page inline: the strict CSP would have refused it, and the button works.
    expect(owner.dialogs).toEqual([]);
  });

  it('sets a webhook with its secret shown once; events held while it is disabled are sent on "Enable again"; a delivery is resent from the log with the same webhook-id', async () => {
    expect(key).not.toBe('');
    const { page } = owner;
    // The receiver answers 410 Gone: the endpoint is switched off, and the call's events are held.
    receiver.respond = () => ({ status: 410 });
    await page.goto(SETTINGS);
    await page.click('a:has-text("Set a webhook URL")');
    await page.waitForURL(`**${SETTINGS}/webhook`);
    await page.fill('input[name=url]', receiver.url);
    await submit(page, 'button:has-text("Set URL")');
    expect(await page.textContent('[role=status]')).toContain(
      `The webhook URL is set to ${receiver.url}, with a new signing secret.`,
    );
    const secret = await page.inputValue('#secret-value');
    expect(secret).toMatch(/^whsec_/);
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    expect(await page.textContent('main')).toContain('This signing secret was already shown');

    const { body } = await apiTrigger(world, key, { phone_number: '+14155552671', metadata: { lead: 7 } });
    const callId = body.call_id as string;
    const [first] = await receiver.waitFor(1, 15_000);
    // The secret shown is the one the events are signed with.
    expect(() => new Webhook(secret).verify(first!.body, first!.headers as Record<string, string>)).not.toThrow();
    // Every delivery of the call is over (the call ended; none waits to be sent) before the endpoint is on again.
    await page.goto(`/dashboard/calls/${callId}`);
    await reloadUntil(page, 'dl.facts', (text) => text.includes('Completed'));
    await page.goto(SETTINGS);
    const section = await reloadUntil(page, WEBHOOK_SECTION, (text) => text.includes('0 waiting to be sent'));
    expect(section).toContain('Disabled: answered 410 Gone');
    expect(section).toContain('2 held');
    expect(section).toMatch(/2 events held since .+: enabling sends them/);

    receiver.respond = () => ({ status: 200 });
    // (The call.completed may have been answered 410 too, if it was sent before the endpoint was switched off.)
    const refused = receiver.received.length;
    await submit(page, 'button:has-text("Enable again and send the 2 held events")');
    expect(await page.textContent('[role=status]')).toContain(
      'The endpoint is enabled again, with the same signing secret. 2 held events are being sent now.',
    );
    // The call.started answered 410 and the call.completed held after it arrive, once each.
    const released = (await receiver.waitFor(refused + 2, 15_000)).slice(refused);
    expect(released.map((r) => (JSON.parse(r.body) as { type: string }).type).sort()).toEqual([
      'call.completed',
      'call.started',
    ]);
    expect(released.map((r) => r.headers['webhook-id'])).toContain(first!.headers['webhook-id']);
    await submit(page, 'a:has-text("Delivery log")');
    const row = page.locator('article.delivery', { hasText: 'call.started' });
    // Both delivered: each summary says its last answer.
    expect(await reloadUntil(page, 'div.deliveries', (text) => text.split('last HTTP 200').length === 3)).toContain(
      'HTTP 410',
    );
    const action = (await row.locator('form').getAttribute('action'))!;
    const deliveryId = /\/deliveries\/([0-9a-f-]{36})\/resend$/.exec(action)![1]!;
    expect(first!.headers['webhook-id']).toBe(deliveryId);
    // Closed, it is one line: its badge, event and last answer. Opened, its payload and every attempt's answer.
    expect(await row.locator('summary').textContent()).toMatch(/^Delivered call\.started .+ 2 attempts, last HTTP 200/);
    const payload = row.locator('pre.payload');
    expect(await payload.isVisible()).toBe(false);
    await row.locator('summary').click();
    expect(await payload.isVisible()).toBe(true);
    expect(JSON.parse((await payload.textContent())!)).toEqual(JSON.parse(first!.body));
    expect(await payload.textContent()).toContain('\n  "type": "call.started"');
    const attempts = row.locator('table.attempts tbody tr');
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).locator('td[data-label=Response]').textContent()).toBe('HTTP 410');
    expect(await attempts.nth(1).locator('td[data-label=Response]').textContent()).toBe('HTTP 200');
    expect(await attempts.nth(1).locator('td[data-label=Latency]').textContent()).toMatch(/^\d+ ms$/);
    // The receiver's answer, markup and all, is text (its default answer has no body: "empty").
    expect(await attempts.nth(1).locator('td').last().textContent()).toBe('empty');
    // Its Resend button is named for it, not one of many identical "Resend".
    const resend = page.getByRole('button', {
      name: /^Resend call\.started of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, call /,
    });
    expect(await resend.count()).toBe(1);

    const before = receiver.received.length;
    await Promise.all([page.waitForNavigation(), resend.click()]);
    expect(await page.textContent('[role=status]')).toBe(
      'The delivery will be sent again in a moment, with the same webhook-id.',
    );
    const again = (await receiver.waitFor(before + 1, 15_000))[before]!;
    expect(again.headers['webhook-id']).toBe(deliveryId);
    expect(again.body).toBe(first!.body);
    expect(() => new Webhook(secret).verify(again.body, again.headers as Record<string, string>)).not.toThrow();

    // The log shows its attempts (410, and 200 twice); none failed.
    const shown = await reloadUntil(page, 'article.delivery:has-text("call.started")', (text) =>
      text.includes('3 attempts, last HTTP 200'),
    );
    expect(shown).toContain('HTTP 410');
    await page.goto(`${SETTINGS}/deliveries?failed=1`);
    expect(await page.locator('article.delivery').count()).toBe(0);
    // The status filter, in its panel, says so.
    expect(await page.locator('details.filters-panel:not(.calls-export)').getAttribute('open')).toBe('');
    expect(await page.locator('#f-status').inputValue()).toBe('failed');
    signed = { secret, delivery: first! };
  });

  it('copies the Node verification snippet next to the secret, and the copied code verifies a real delivery', async () => {
    expect(signed).not.toBeNull();
    const { page } = owner;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.goto(SETTINGS);
    const code = page.locator('#verify-node');
    expect(await code.isVisible()).toBe(false);
    await page.click('details.verify summary');
    expect(await code.isVisible()).toBe(true);
    const button = page.locator('button[data-copy="verify-node"]');
    await button.click();
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(await button.textContent()).toBe('Copied');
    expect(copied).toBe((await code.textContent())!.trim());
    expect(copied).toContain('from "standardwebhooks"');
    // What was copied runs: in a node process of its own, on the body and headers a receiver got, with the secret.
    const program = `const payload = ${JSON.stringify(signed!.delivery.body)};\nconst headers = ${JSON.stringify(signed!.delivery.headers)};\n${copied}\n`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', program], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: signed!.secret },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^call\.started \{/);
    expect(owner.dialogs).toEqual([]);
  });

  it("shows markup in a client's name, made in the Clients page, as text", async () => {
    const hostile = '<script>alert("client")</script><img src=x onerror=alert(2)> Smile & "Co" Zoë';
    const { page, dialogs } = owner;
    await page.goto('/dashboard/clients');
    await page.fill('input[name=name]', hostile);
    await page.click('button:has-text("Create client")');
    await page.waitForURL(/\/dashboard\/clients\/[0-9a-f-]{36}$/);
    expect(await page.textContent('[role=status]')).toBe(`The client ${hostile} is created.`);
    expect(await page.textContent('h1')).toBe(`Client: ${hostile}`);
    expect(await page.textContent('dl.facts dd')).toBe(hostile);
    await page.goto('/dashboard/clients');
    expect(await page.textContent('table.rows tbody td a')).toBe(hostile);
    await page.goto('/dashboard');
    expect(await page.textContent('#calls-now tbody')).toContain(hostile);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });
});
