// The agent form in a real browser (issue 24, point 4): a new agent's zone is the browser's (chosen by the self-hosted
// script; UTC with script off), windows are entered with day boxes and time inputs, rows are added and removed with
// buttons that keep what was typed, every problem shows next to its field at once, Enter saves (not "Remove"), and
// the agent is archived from its page; a caller ID typed as people write it; the settings that cannot apply disabled
// by a self-hosted script while they cannot (issue 45, points 16 and 22).
import type { BrowserContextOptions, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  agencyWithUser,
  chromiumAvailable,
  PASSWORD,
  signIn,
  startBrowserWorld,
  submit,
  type BrowserWorld,
} from './browser.js';

const available = chromiumAvailable();
let world: BrowserWorld;
const EMAIL = 'owner@agents-browser.example';

/** A fresh context with `options` (a time zone, script off), signed in through the sign-in form. */
const signedIn = (options: BrowserContextOptions) => signIn(world, EMAIL, PASSWORD, options);

/** The rows on the page: each row's ticked days and its times, read from the inputs themselves. */
async function rows(page: Page) {
  const found: { days: string[]; from: string; to: string }[] = [];
  for (const row of await page.locator('fieldset.window-row').all()) {
    const days: string[] = [];
    for (const box of await row.locator('input[type=checkbox]').all())
      if (await box.isChecked()) days.push(((await box.getAttribute('value')) ?? '').replace(/^\d+:/, ''));
    found.push({
      days,
      from: await row.locator('input[name=window_from]').inputValue(),
      to: await row.locator('input[name=window_to]').inputValue(),
    });
  }
  return found;
}

describe.skipIf(!available)('the agent form in chromium', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld();
    await agencyWithUser(world, 'Form Agency', EMAIL);
  }, 90_000);

  it("chooses the browser's zone with script, and UTC without", async () => {
    const { page, dialogs } = await signedIn({ timezoneId: 'Asia/Kolkata' });
    await page.goto('/dashboard/agents/new');
    // Chromium may report the zone by its old name (Asia/Calcutta): the option's aliases find Asia/Kolkata.
    expect(await page.inputValue('#f-timezone')).toBe('Asia/Kolkata');
    const reported = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(['Asia/Kolkata', 'Asia/Calcutta']).toContain(reported);
    expect(dialogs).toEqual([]);

    const kyiv = await signedIn({ timezoneId: 'Europe/Kyiv' });
    await kyiv.page.goto('/dashboard/agents/new');
    expect(await kyiv.page.inputValue('#f-timezone')).toBe('Europe/Kyiv');

    const noScript = await signedIn({ timezoneId: 'Asia/Kolkata', javaScriptEnabled: false });
    await noScript.page.goto('/dashboard/agents/new');
    expect(await noScript.page.inputValue('#f-timezone')).toBe('UTC');
  });

  for (const javaScriptEnabled of [true, false]) {
    it(`enters windows with boxes and time inputs, adds and removes rows, shows every problem, saves (script ${
      javaScriptEnabled ? 'on' : 'off'
    })`, async () => {
      const name = `Front desk ${javaScriptEnabled ? 'A' : 'B'}`;
      const { page, dialogs } = await signedIn({ timezoneId: 'America/New_York', javaScriptEnabled });
      await page.goto('/dashboard/agents/new');
      expect(await page.locator('fieldset.window-row').count()).toBe(1);
      expect(await page.getAttribute('#f-w0-from', 'type')).toBe('time');
      expect(await page.getAttribute('#f-w0-to', 'type')).toBe('time');
      expect(await page.locator('fieldset.window-row input[type=checkbox]').count()).toBe(7);

      await page.fill('#f-name', name);
      await page.fill('#f-phone', '+14155550100');
      await page.selectOption('#f-timezone', 'America/Chicago');
      for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'])
        await page.check(`#f-w0-days input[aria-label=${day}]`);
      await page.fill('#f-w0-from', '09:00');
      await page.fill('#f-w0-to', '17:00');

      // Add a window: the form comes back with what was typed and an empty row; nothing is saved.
      await submit(page, 'button:has-text("Add a window")');
      expect(await rows(page)).toEqual([
        { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' },
        { days: [], from: '', to: '' },
      ]);
      expect(await page.inputValue('#f-name')).toBe(name);
      expect(await page.inputValue('#f-timezone')).toBe('America/Chicago');
      await page.check('#f-w1-days input[aria-label=Saturday]');
      await page.fill('#f-w1-from', '10:00');
      await submit(page, 'button:has-text("Add a window")');
      await page.check('#f-w2-days input[aria-label=Sunday]');
      await page.fill('#f-w2-from', '12:00');
      await page.fill('#f-w2-to', '13:00');

      // Remove the first: the others move up with their boxes and times.
      await submit(page, 'button:has-text("Remove window 1")');
      expect(await rows(page)).toEqual([
        { days: ['sat'], from: '10:00', to: '' },
        { days: ['sun'], from: '12:00', to: '13:00' },
      ]);
      expect(await world.prisma.agent.count({ where: { name } })).toBe(0);

      // Save with problems: each next to its field, all at once, the field marked.
      await page.fill('#f-name', '');
      await page.fill('#f-phone', '+1 415 555 0100 ext 2');
      await submit(page, 'form.agent-form button[type=submit]:has-text("Create agent")');
      expect(await page.textContent('.notice.error')).toContain('Some fields need a change');
      expect(await page.textContent('#f-name-error')).toBe('Give the agent a name.');
      expect(await page.textContent('#f-phone-error')).toContain('no letters, no extension');
      expect(await page.textContent('#f-w0-to-error')).toBe('Enter the time this window closes, such as 17:00.');
      expect(await page.getAttribute('#f-name', 'aria-invalid')).toBe('true');
      expect(await page.getAttribute('#f-name', 'aria-describedby')).toBe('f-name-error');
      expect(await page.getAttribute('#f-w0-to', 'aria-describedby')).toBe('f-w0-to-error');
      expect(await page.locator('.field-error').count()).toBe(3);
      expect(await page.inputValue('#f-phone')).toBe('+1 415 555 0100 ext 2');
      expect(await rows(page)).toEqual([
        { days: ['sat'], from: '10:00', to: '' },
        { days: ['sun'], from: '12:00', to: '13:00' },
      ]);

      // Fixed (as people write numbers), and Enter in the name field saves (the first submit button is Save, not
      // "Remove window 1").
      await page.fill('#f-phone', '(415) 555-0100');
      await page.fill('#f-w0-to', '00:00');
      await page.fill('#f-name', name);
      await Promise.all([page.waitForURL(/\/dashboard\/agents$/), page.press('#f-name', 'Enter')]);
      expect(await page.textContent('.notice.ok')).toContain(
        `Agent ${name} created. Its caller ID is stored as +14155550100.`,
      );
      const agent = await world.prisma.agent.findFirstOrThrow({ where: { name } });
      expect(agent).toMatchObject({
        timezone: 'America/Chicago',
        phoneNumber: '+14155550100',
        callingWindows: [
          { days: [6], start: '10:00', end: '24:00' },
          { days: [7], start: '12:00', end: '13:00' },
        ],
      });

      // Archived from its page: listed under Archived, restorable.
      await page.goto(`/dashboard/agents/${agent.id}`);
      expect(await page.textContent('#agent-curl')).toContain(`"agent_id": "${agent.id}"`);
      await submit(page, 'button:has-text("Archive this agent")');
      expect(await page.textContent('section[aria-labelledby=archived-heading]')).toContain(name);
      await submit(page, `section[aria-labelledby=archived-heading] button[aria-label="Restore ${name}"]`);
      expect(await page.locator('section[aria-labelledby=archived-heading]').count()).toBe(0);
      expect(dialogs).toEqual([]);
    });
  }

  it('disables what cannot apply while it cannot, and a save returns it to its neutral value (script on)', async () => {
    const { page, dialogs } = await signedIn({ timezoneId: 'UTC' });
    await page.goto('/dashboard/agents/new');
    const disabled = async () => ({
      outcomes: await page.locator('#f-retry_on input').first().isDisabled(),
      waits: await page.isDisabled('#f-retry_waits_minutes'),
      message: await page.isDisabled('#f-voicemail_message'),
      policy: await page.locator('#f-policy input').first().isDisabled(),
      hours: await page.locator('#f-window_timezone input').first().isDisabled(),
    });
    // A new agent: one attempt, no window, no voicemail detection: nothing of these applies.
    expect(await disabled()).toEqual({ outcomes: true, waits: true, message: true, policy: true, hours: true });
    await page.selectOption('#f-max_attempts', '3');
    await page.check('#f-w0-days input[aria-label=Monday]');
    await page.check('#f-voicemail input[value=leave_message]');
    expect(await disabled()).toEqual({ outcomes: false, waits: false, message: false, policy: false, hours: false });

    // Everything on, then the window untied, one attempt, hang up: saved, the rest back to neutral.
    await page.fill('#f-name', 'Neutral');
    await page.fill('#f-phone', '+1 415 555 0142');
    await page.check('#f-retry_on input[value=busy]');
    await page.fill('#f-voicemail_message', 'Hello {{name}}');
    await page.check('#f-policy input[value=reject]');
    await page.check('#f-window_timezone input[value=recipient]');
    await page.uncheck('#f-w0-days input[aria-label=Monday]');
    await page.selectOption('#f-max_attempts', '1');
    await page.check('#f-voicemail input[value=hang_up]');
    expect(await disabled()).toEqual({ outcomes: true, waits: true, message: true, policy: true, hours: true });
    await Promise.all([page.waitForURL(/\/dashboard\/agents$/), page.click('button:has-text("Create agent")')]);
    expect(await world.prisma.agent.findFirstOrThrow({ where: { name: 'Neutral' } })).toMatchObject({
      phoneNumber: '+14155550142',
      callingWindows: [],
      outsideWindowPolicy: 'queue',
      windowTimezone: 'agent',
      maxAttempts: 1,
      retryOn: [],
      voicemail: 'hang_up',
      voicemailMessage: null,
    });
    expect(dialogs).toEqual([]);

    // Without script every field stays usable, and the server refuses the contradiction next to its field.
    const noScript = await signedIn({ timezoneId: 'UTC', javaScriptEnabled: false });
    await noScript.page.goto('/dashboard/agents/new');
    expect(await noScript.page.locator('#f-policy input').first().isDisabled()).toBe(false);
    await noScript.page.fill('#f-name', 'Refused');
    await noScript.page.check('#f-policy input[value=reject]');
    await submit(noScript.page, 'button:has-text("Create agent")');
    expect(await noScript.page.textContent('#f-policy-error')).toContain('the agent is always open');
  });
});
