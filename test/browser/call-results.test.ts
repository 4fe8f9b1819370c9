// The runtime's result in a real browser (issue 47, point 6): a hostile result (markup, a script, a right-to-left
// override, a 4,000-character word, long data values and transcript lines) on the call page runs nothing and widens
// nothing, on a wide screen and a phone's; its links are https and leak no referrer; the Calls list's Outcome column
// fits too.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { storageOf } from '../helpers/database.js';
import { forceResult, insertCalls } from '../helpers/seed.js';
import { agencyWithUser, chromiumAvailable, signIn, startBrowserWorld, type BrowserWorld } from './browser.js';

const available = chromiumAvailable();
const SCRIPT = `<script>alert('summary')</script><img src=x onerror=alert(2)>`;
const WORD = 'w'.repeat(4000);
let world: BrowserWorld;
let callId: string;

describe.skipIf(!available)("the runtime's result in chromium", { timeout: 60_000 }, () => {
  beforeAll(async () => {
    world = await startBrowserWorld();
    const { accountId } = await agencyWithUser(world, 'Results Agency', 'owner@results.example');
    const agent = await createAgent(storageOf(world.prisma), {
      accountId,
      name: 'Front desk',
      phone: '+14155550100',
      now: new Date(),
    });
    const ids = await insertCalls(world.prisma, {
      accountId,
      agentId: agent.id,
      count: 1,
      createdAt: new Date('2058-03-11T10:00:00Z'),
    });
    callId = ids[0]!;
    await forceResult(world.prisma, callId, {
      outcome: `appointment_booked_${'x'.repeat(40)}`,
      summary: `${SCRIPT} \u202Eevil ${WORD}`,
      dataJson: JSON.stringify({ note: WORD, html: SCRIPT, ['k'.repeat(40)]: 'v' }),
      transcript: Array.from({ length: 30 }, (_, i) => ({
        speaker: i % 2 ? ('callee' as const) : ('agent' as const),
        text: i === 3 ? WORD.slice(0, 2000) : `${SCRIPT} line ${i}`,
        at: new Date(Date.parse('2058-03-11T10:00:02Z') + i * 7000).toISOString(),
      })),
      transcript_url: `https://runtime.example/${'t'.repeat(1900)}`,
      recording_url: 'https://runtime.example/r/1',
    });
  });

  it('runs nothing, widens nothing, and links without a referrer', async () => {
    const { page, dialogs } = await signIn(world, 'owner@results.example');
    for (const [path, selector] of [
      [`/dashboard/calls/${callId}`, 'section.call-result'],
      ['/dashboard/calls', 'table.rows.calls'],
    ] as const) {
      await page.goto(path);
      for (const size of [
        { width: 1280, height: 800 },
        { width: 390, height: 844 },
      ]) {
        await page.setViewportSize(size);
        const sideways = await page.evaluate<number>(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        if (sideways > 0)
          console.log(
            await page.evaluate<string[]>(`Array.from(document.querySelectorAll('main *'))
              .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
              .slice(0, 12).map((el) => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().width))`),
          );
        expect(sideways, `${path} at ${size.width} px`).toBe(0);
        const box = (await page.locator(selector).boundingBox())!;
        expect(box.x + box.width, `${path} at ${size.width} px`).toBeLessThanOrEqual(size.width + 0.5);
      }
    }
    await page.goto(`/dashboard/calls/${callId}`);
    expect(await page.locator('.result-summary').textContent()).toContain(SCRIPT);
    expect(await page.locator('ol.transcript li').count()).toBe(30);
    const anchors = page.locator('.result-links a');
    const links: [string | undefined, string | null][] = [];
    for (let i = 0; i < (await anchors.count()); i++)
      links.push([(await anchors.nth(i).getAttribute('href'))?.slice(0, 26), await anchors.nth(i).getAttribute('rel')]);
    expect(links).toEqual([
      ['https://runtime.example/tt', 'noopener noreferrer'],
      ['https://runtime.example/r/', 'noopener noreferrer'],
    ]);
    expect(dialogs).toEqual([]);
  });
});
