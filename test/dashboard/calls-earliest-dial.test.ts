// A waiting call's earliest dial, as the Calls list's badge and the call page name it: one reading of the call's
// scheduled time, next attempt and calling window (src/domain/dial-wait.ts), so a schedule that lands outside the
// agent's window shows the window's opening on both pages, never the schedule alone on the list.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';
import { forceCall } from '../helpers/seed.js';

/** Thursday 2054-12-03, 10:00 in New York. */
const NOW = new Date('2054-12-03T15:00:00Z');

let app: App;
let tenant: Tenant;
let visitor: Visitor;

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => NOW, env: DASHBOARD_ENV }));
  // Weekdays 08:00-17:00 in New York; outside it, calls wait.
  tenant = await createTenant(app.storage, {
    timezone: 'America/New_York',
    windows: ['mon-fri 08:00-17:00'],
    outsideWindow: 'queue',
  });
  await createUserWithPassword(app.storage, tenant.accountId, 'earliest@calls.example');
  visitor = new Visitor(app);
  expect((await visitor.signIn('earliest@calls.example')).status).toBe(303);
});

async function scheduled(at: string): Promise<string> {
  const res = await trigger(
    app,
    tenant.key,
    { phone_number: '+14155552671', scheduled_at: at },
    { 'x-forwarded-proto': 'https' },
  );
  expect(res.statusCode, res.body).toBe(200);
  return callIdOf(res);
}

const decode = (text: string) =>
  text
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
/** The badge of the call's row in the Calls list, as a person reads it (its two parts joined), and its title. */
async function badgeOf(callId: string): Promise<{ text: string; title: string | null }> {
  const page = decode((await visitor.get('/dashboard/calls')).body);
  const row = page.split('<tr>').find((r) => r.includes(callId))!;
  const badge =
    /<span class="badge[^"]*" data-tone="wait"(?: title="([^"]*)")?>(<span>[^<]*<\/span> <span>[^<]*<\/span>|[^<]*)<\/span>/.exec(
      row,
    )!;
  return { text: badge[2]!.replace(/<\/?span>/g, ''), title: badge[1] ?? null };
}
async function waitingLineOf(callId: string): Promise<string> {
  const page = decode((await visitor.get(`/dashboard/calls/${callId}`)).body);
  return /<dt>Waiting<\/dt><dd class="waiting">([^<]*)<\/dd>/.exec(page)![1]!;
}

describe("a scheduled call's earliest dial", () => {
  it('lands outside the window (Saturday 09:30): the list and the call page both say the window opens Monday 08:00', async () => {
    const callId = await scheduled('2054-12-05T09:30:00-05:00');
    const stored = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });
    expect(stored.notBefore).toEqual(new Date('2054-12-07T13:00:00Z'));

    const badge = await badgeOf(callId);
    expect(badge.text).toBe("Scheduled; the window opens 7 Dec, 08:00 (agent's zone, America/New_York)");
    expect(badge.text).not.toContain('5 Dec');
    expect(badge.title).toBe(
      "Scheduled for 5 Dec, 09:30 America/New_York, outside the calling window. Calling hours read in America/New_York: the agent's",
    );
    expect(await waitingLineOf(callId)).toBe(
      'Scheduled for 2054-12-05 14:30:00 UTC (Sat 09:30 America/New_York); then the calling window, which opens ' +
        '2054-12-07 13:00:00 UTC (Mon 08:00 America/New_York)',
    );
  });

  it('inside the window (Friday 09:30): both pages name the scheduled time', async () => {
    const callId = await scheduled('2054-12-04T09:30:00-05:00');
    expect((await badgeOf(callId)).text).toBe('Scheduled for 4 Dec, 09:30 America/New_York');
    expect(await waitingLineOf(callId)).toBe('Scheduled for 2054-12-04 14:30:00 UTC (Fri 09:30 America/New_York)');
  });

  it('a retry due outside the window: both pages say when the window then opens', async () => {
    const callId = await scheduled('2054-12-04T09:30:00-05:00');
    // As the dispatcher leaves a retry it found the window shut for: next attempt Friday 18:00, window Monday 08:00.
    await forceCall(prismaOf(app), callId, {
      scheduledAt: null,
      attempt: 2,
      nextAttemptAt: new Date('2054-12-04T23:00:00Z'),
      notBefore: new Date('2054-12-07T13:00:00Z'),
    });
    expect((await badgeOf(callId)).text).toBe(
      "Retrying; the window opens 7 Dec, 08:00 (agent's zone, America/New_York)",
    );
    expect(await waitingLineOf(callId)).toBe(
      'Attempt 2 is due 2054-12-04 23:00:00 UTC (Fri 18:00 America/New_York); then the calling window, which opens ' +
        '2054-12-07 13:00:00 UTC (Mon 08:00 America/New_York)',
    );
  });
});
