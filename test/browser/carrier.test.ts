// Settings → Carrier in a real browser (issue 50, point 7): reached from the navigation, the service's default shown;
// the Twilio form opened and filled, a token the carrier (a local stand-in) refuses shown above the form with the SID
// kept and the token field empty; then the right token saved, the account's own carrier and its numbers shown, and
// the token in no page.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CARRIER_SID,
  CARRIER_TOKEN,
  CarrierAccountsStandIn,
  TWILIO_NUMBERS,
} from '../helpers/carrier-accounts-stand-in.js';
import { agencyWithUser, chromiumAvailable, signIn, startBrowserWorld, submit, type SignedIn } from './browser.js';

const available = chromiumAvailable();
const standIn = new CarrierAccountsStandIn();
const WRONG = 'b'.repeat(32);
let owner: SignedIn;

// A real browser and a real server on a busy 2-core machine: each test gets a minute.
describe.skipIf(!available)('Settings → Carrier in chromium', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    await standIn.start();
    const world = await startBrowserWorld(standIn.env());
    await agencyWithUser(world, 'Carrier Agency', 'owner@carrier.example');
    owner = await signIn(world, 'owner@carrier.example');
  }, 90_000);

  it('sets Twilio from the form: a refusal above it with the token emptied, then saved with its numbers', async () => {
    const { page } = owner;
    await submit(page, 'nav a[href="/dashboard/settings/carrier"]');
    expect(await page.textContent('main')).toContain("The service's default carrier");

    await page.click('summary:has-text("Twilio")');
    await page.fill('#f-twilio-account_sid', CARRIER_SID);
    await page.fill('#f-twilio-auth_token', WRONG);
    await submit(page, 'form[aria-label="Twilio credentials"] button[type=submit]');
    expect(await page.textContent('[role=alert]')).toContain(
      'Twilio did not accept these credentials: it refused these credentials (HTTP 401)',
    );
    expect(await page.isVisible('#f-twilio-account_sid')).toBe(true);
    expect(await page.inputValue('#f-twilio-account_sid')).toBe(CARRIER_SID);
    expect(await page.inputValue('#f-twilio-auth_token')).toBe('');
    expect(await page.content()).not.toContain(WRONG);

    await page.fill('#f-twilio-auth_token', CARRIER_TOKEN);
    await submit(page, 'form[aria-label="Twilio credentials"] button[type=submit]');
    expect(await page.textContent('[role=status]')).toContain('Saved: Twilio accepted these credentials');
    const current = (await page.textContent('section[aria-labelledby=current-title]')) ?? '';
    expect(current).toContain("The agency's own carrier");
    expect(current).toContain(TWILIO_NUMBERS.join(', '));
    expect(await page.content()).not.toContain(CARRIER_TOKEN);
    expect(standIn.requests).toContain(`GET /2010-04-01/Accounts/${CARRIER_SID}.json`);
  });
});
