// The password re-check in a real browser (issue 45, point 18): a form filled in while the sign-in was recent, sent
// after it stopped being recent, goes through "Confirm your password" and comes back filled in as it was (the
// webhook URL typed, the invitation's address and account), never with the password; sent again, it does its work.
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/admin/accounts.js';
import { storageOf } from '../helpers/database.js';
import {
  agencyWithUser,
  chromiumAvailable,
  PASSWORD,
  signIn,
  startBrowserWorld,
  submit,
  type BrowserWorld,
  type SignedIn,
} from './browser.js';
import { ageSignIn } from '../helpers/seed.js';

const available = chromiumAvailable();
const WEBHOOK_PAGE = '/dashboard/settings/api-webhooks/webhook';

let world: BrowserWorld;
let owner: SignedIn;
let userId = '';
let clientId = '';

/** Makes the user's last password entry 11 minutes old, as if they had spent that long on the form. */
const signedInLongAgo = () => ageSignIn(world.prisma, userId, Date.now() - 11 * 60 * 1000);

/** Types the password on the re-check page and comes back to the form's page; what the re-check page said. */
async function confirmPassword(backTo: string): Promise<string> {
  await owner.page.waitForURL('**/dashboard/confirm-password?**');
  const said = (await owner.page.textContent('main')) ?? '';
  await owner.page.fill('#f-password', PASSWORD);
  await Promise.all([owner.page.waitForURL(`**${backTo}`), owner.page.click('main button[type=submit]')]);
  return said;
}

const KEPT = 'What you typed in the form is kept';

describe.skipIf(!available)('the password re-check keeps the form', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    const made = await agencyWithUser(world, 'Recheck Agency', 'owner@recheck.example');
    userId = made.userId;
    ({ id: clientId } = await createClient(storageOf(world.prisma), {
      now: new Date(),
      agencyId: made.accountId,
      name: 'Slow Client',
    }));
    owner = await signIn(world, 'owner@recheck.example');
  }, 90_000);

  it('the webhook URL typed in comes back filled in after the re-check, and then sets the webhook', async () => {
    const { page } = owner;
    const url = 'https://hooks.recheck.example/calls?team=7';
    await page.goto(WEBHOOK_PAGE);
    await page.fill('input[name=url]', url);
    await signedInLongAgo();
    await page.click('main button[type=submit]');
    const said = await confirmPassword(WEBHOOK_PAGE);
    expect(await page.inputValue('input[name=url]')).toBe(url);
    expect(said).toContain(KEPT);
    expect(await page.content()).not.toContain(PASSWORD);
    // Once: a later visit shows the page as stored, not the kept form.
    await submit(page, 'main button[type=submit]');
    expect(await page.textContent('main')).toContain('signing secret');
    expect(await page.content()).toContain(url.replace('&', '&amp;'));
  });

  it("the invitation's address and account come back filled in, and the invitation is then made", async () => {
    const { page } = owner;
    await page.goto('/dashboard/users');
    await page.fill('#f-invite-email', 'late.comer@recheck.example');
    await page.selectOption('select[name=account]', clientId);
    await signedInLongAgo();
    await page.click('form[action="/dashboard/users/invite"] button[type=submit]');
    const said = await confirmPassword('/dashboard/users');
    expect(await page.inputValue('#f-invite-email')).toBe('late.comer@recheck.example');
    expect(await page.inputValue('select[name=account]')).toBe(clientId);
    expect(said).toContain(KEPT);
    await submit(page, 'form[action="/dashboard/users/invite"] button[type=submit]');
    expect(await page.textContent('h1')).toBe('Invitation link');
    expect(await page.textContent('main')).toContain('late.comer@recheck.example');

    // Shown once: the Users page afterwards has an empty form again.
    await page.goto('/dashboard/users');
    expect(await page.inputValue('#f-invite-email')).toBe('');
  });
});
