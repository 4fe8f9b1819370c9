// A live refresh that meets a busy server (issue 45, point 3) in a real browser: answered 503 with Retry-After, it
// is not swapped in and does not reload the page, which keeps what it showed and shows the next change once the
// server answers again.
import pg from 'pg';
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

interface Probe {
  loadedOnce?: boolean;
  document: { querySelector(selector: string): { textContent: string | null } | null };
}

describe.skipIf(!available)('a live refresh answered "busy"', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld({ DISPATCH_ENABLED: 'false' });
  }, 90_000);

  it('keeps the last content, then shows the next change', async () => {
    const { accountId } = await agencyWithUser(world, 'Busy Agency', 'owner@busy.example');
    const storage = storageOf(world.prisma);
    const agent = await createAgent(storage, { now: new Date(), accountId, name: 'Front desk', phone: '+14155550100' });
    await setDefaultAgent(storage, accountId, agent.id, undefined, new Date());
    const { key } = await generateKey(storage, accountId, undefined, { now: new Date() });
    const ids: string[] = [];
    for (const phone of ['+14155552691', '+14155552692']) {
      const res = await apiTrigger(world, key, { phone_number: phone });
      expect(res.status).toBe(200);
      ids.push(res.body.call_id as string);
    }
    const { page } = await signIn(world, 'owner@busy.example');
    await page.goto('/dashboard/calls');
    await page.evaluate(() => ((globalThis as unknown as Probe).loadedOnce = true));
    const row = (id: string) => `#live table tr:has(a[href="/dashboard/calls/${id}"])`;
    expect(await page.textContent(row(ids[0]!))).toContain('Waiting');

    // The calls table locked elsewhere: the refresh's statement waits past its timeout.
    const locker = new pg.Client({ connectionString: world.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE calls IN ACCESS EXCLUSIVE MODE');
      const refused = await page.waitForResponse(
        (response) => response.request().headers()['hx-request'] === 'true' && response.status() !== 200,
        { timeout: 30_000 },
      );
      expect(refused.status()).toBe(503);
      expect(await refused.headerValue('retry-after')).toBe('5');
      // htmx has had the answer: nothing swapped in, no reload.
      await page.waitForTimeout(500);
      expect(await page.textContent(row(ids[0]!))).toContain('Waiting');
      expect(await page.getAttribute('#live', 'hx-trigger')).toBe('every 5s');
      expect(await page.evaluate(() => (globalThis as unknown as Probe).loadedOnce)).toBe(true);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }

    // The server answers again: the next tick shows the change on the same page.
    await cancelCall(storage, ids[0]!, { kind: 'operator' }, new Date());
    await page.waitForFunction(
      (selector) =>
        ((globalThis as unknown as Probe).document.querySelector(selector)?.textContent ?? '').includes(
          'Failed: canceled',
        ),
      row(ids[0]!),
      { timeout: 30_000 },
    );
    expect(await page.evaluate(() => (globalThis as unknown as Probe).loadedOnce)).toBe(true);
  });
});
