// The Overview's chart (issue 47, point 6): calls per UTC day by outcome over the last 7 or 30 days, answered calls
// by the runtime's outcome label, the others as busy, no answer, voicemail or failed; drawn on the server (an SVG with
// role="img" and a name saying what it shows, no script), its numbers as a table; each viewer's scope only (an
// agency's own and its clients', a client's own), never another tenant's; hostile labels escaped.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import type { FailureReason } from '../../src/generated/prisma/client.js';
import { overviewChart, CHART_LABELS_MAX } from '../../src/views/pages/overview-chart.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceCalls, forceResult, insertCalls } from '../helpers/seed.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

const NOW = new Date('2058-03-11T12:00:00.000Z');
let app: App;
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const visitors = {} as Record<keyof typeof tenants, Visitor>;

/** `count` calls of `tenant` that ended on `day` (YYYY-MM-DD, 10:00 UTC), completed or failed for `reason`. */
async function ended(tenant: Tenant, day: string, count: number, reason?: FailureReason): Promise<string[]> {
  const ids = await insertCalls(prismaOf(app), {
    accountId: tenant.accountId,
    agentId: tenant.agentId,
    count,
    createdAt: new Date(`${day}T10:00:00.000Z`),
    status: reason ? 'failed' : 'completed',
  });
  if (reason && reason !== 'busy') await forceCalls(prismaOf(app), { id: { in: ids } }, { failureReason: reason });
  return ids;
}

/** The chart's table: each day's row as { series label: count }. */
function chartTable(body: string): Map<string, Record<string, number>> {
  const start = body.indexOf('id="outcome-chart-table"');
  expect(start).toBeGreaterThan(0);
  const table = body.slice(start, body.indexOf('</table>', start));
  const heads = [...table.slice(0, table.indexOf('</thead>')).matchAll(/<th scope="col">([^<]*)<\/th>/g)].map(
    (m) => m[1]!,
  );
  return new Map(
    [...table.matchAll(/<tr><th scope="row" data-label="Day">([^<]+)<\/th>([\s\S]*?)<\/tr>/g)].map((m) => {
      const cells = [...m[2]!.matchAll(/<td[^>]*>(\d+)<\/td>/g)].map((c) => Number(c[1]));
      return [m[1]!, Object.fromEntries(heads.slice(1).map((h, i) => [h, cells[i]!]))];
    }),
  );
}

/** The chart's accessible name. */
const chartName = (body: string) => /<svg id="outcome-chart" role="img" aria-label="([^"]*)"/.exec(body)?.[1];

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: { ...DASHBOARD_ENV }, clock: () => NOW }));
  const prisma = prismaOf(app);
  tenants.A = await createTenant(app.storage, { name: 'Agency A' });
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client A1' });
  tenants.B = await createTenant(app.storage, { name: 'Tenant B' });
  // Today: A has 3 answered (2 booked, 1 without a result) and 1 busy; B 5 booked (never A's).
  const [a1, a2] = await ended(tenants.A, '2058-03-11', 3);
  for (const id of [a1!, a2!]) await forceResult(prisma, id, { outcome: 'appointment_booked' }, { inEvent: true });
  await ended(tenants.A, '2058-03-11', 1, 'busy');
  for (const id of await ended(tenants.B, '2058-03-11', 5))
    await forceResult(prisma, id, { outcome: 'appointment_booked' }, { inEvent: true });
  // Two days ago: A1 has 2 not interested and a voicemail; yesterday A a label written by hand with markup.
  for (const id of await ended(tenants.A1, '2058-03-09', 2))
    await forceResult(prisma, id, { outcome: 'not_interested' }, { inEvent: false });
  await ended(tenants.A1, '2058-03-09', 1, 'voicemail');
  const [hostile] = await ended(tenants.A, '2058-03-10', 1);
  await forceResult(prisma, hostile!, { outcome: '<i>x</i>' });
  // 19 days ago (in the 30 days, not the 7): an unanswered call and a canceled one (failed otherwise).
  await ended(tenants.A, '2058-02-20', 1, 'no_answer');
  await ended(tenants.A, '2058-02-20', 1, 'canceled');
  for (const [name, tenant] of Object.entries(tenants) as [keyof typeof tenants, Tenant][]) {
    await createUserWithPassword(app.storage, tenant.accountId, `${name.toLowerCase()}@chart.example`);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.10.0.${Object.keys(visitors).length}`;
    expect((await visitors[name].signIn(`${name.toLowerCase()}@chart.example`)).status).toBe(303);
  }
});

describe("the Overview's chart", () => {
  it("shows an agency's last 7 days by outcome, its clients' too, as an image with a name and a table", async () => {
    const body = (await visitors.A.get('/dashboard')).body;
    const table = chartTable(body);
    expect([...table.keys()]).toEqual([
      '2058-03-05',
      '2058-03-06',
      '2058-03-07',
      '2058-03-08',
      '2058-03-09',
      '2058-03-10',
      '2058-03-11',
    ]);
    const zero = {
      appointment_booked: 0,
      not_interested: 0,
      [html('<i>x</i>')]: 0,
      'answered, no outcome reported': 0,
      voicemail: 0,
      'no answer': 0,
      busy: 0,
      'failed otherwise': 0,
    };
    expect(table.get('2058-03-11')).toEqual({
      ...zero,
      appointment_booked: 2,
      'answered, no outcome reported': 1,
      busy: 1,
      Total: 4,
    });
    expect(table.get('2058-03-10')).toEqual({ ...zero, [html('<i>x</i>')]: 1, Total: 1 });
    expect(table.get('2058-03-09')).toEqual({ ...zero, not_interested: 2, voicemail: 1, Total: 3 });
    expect(table.get('2058-03-05')).toEqual({ ...zero, Total: 0 });
    expect(chartName(body)).toBe(
      html(
        "Calls per day by outcome, the last 7 days (UTC, 2058-03-05 to 2058-03-11): 8 calls ended: appointment_booked 2, not_interested 2, <i>x</i> 1, answered, no outcome reported 1, voicemail 1, busy 1. The table below has each day's numbers.",
      ),
    );
    // Drawn on the server: bars, no script of its own, the markup escaped.
    const section = body.slice(body.indexOf('id="chart-heading"'), body.indexOf('id="outcome-chart-table"'));
    expect(section).toContain('<rect x=');
    expect(section).not.toContain('<script');
    expect(body).not.toContain('<i>x</i>');
    expect(section).toContain('<strong aria-current="page">Last 7 days</strong>');
    expect(section).toContain('<a href="/dashboard?days=30">Last 30 days</a>');
    // Each of the runtime's labels links to its calls.
    expect(section).toContain(
      '<a href="/dashboard/calls?outcome=appointment_booked"><code>appointment_booked</code></a>: 2',
    );
    expect(section).toContain(
      `<a href="/dashboard/calls?outcome=%3Ci%3Ex%3C%2Fi%3E"><code>${html('<i>x</i>')}</code></a>: 1`,
    );
  });

  it('shows the last 30 days when asked, and 7 for anything else', async () => {
    const body = (await visitors.A.get('/dashboard?days=30')).body;
    const table = chartTable(body);
    expect(table.size).toBe(30);
    expect(table.get('2058-02-20')).toMatchObject({ 'no answer': 1, 'failed otherwise': 1, Total: 2 });
    expect(chartName(body)).toContain('10 calls ended');
    expect(chartTable((await visitors.A.get('/dashboard?days=31')).body).size).toBe(7);
  });

  it("shows a client its own calls, and another tenant nothing of this agency's", async () => {
    const ofA1 = (await visitors.A1.get('/dashboard')).body;
    expect(chartName(ofA1)).toContain('3 calls ended: not_interested 2, voicemail 1.');
    expect(ofA1).not.toContain('appointment_booked');
    const ofB = (await visitors.B.get('/dashboard?days=30')).body;
    expect(chartName(ofB)).toContain('5 calls ended: appointment_booked 5.');
    expect(ofB).not.toContain('not_interested');
    expect(ofB).not.toContain(html('<i>x</i>'));
    expect(chartTable(ofB).get('2058-03-11')).toMatchObject({ appointment_booked: 5, Total: 5 });
  });
});

describe("the chart's layout", () => {
  it(`names the ${CHART_LABELS_MAX} most frequent labels and counts the others together`, () => {
    const rows = Array.from({ length: 8 }, (_, i) => ({
      day: '2058-03-11',
      outcome: `agent:label_${i}`,
      calls: i + 1,
    }));
    rows.push({ day: '2058-03-11', outcome: 'completed', calls: 40 });
    const chart = overviewChart(rows, NOW, 7, '/dashboard');
    expect(chart.series.map((s) => s.label)).toEqual([
      'label_7',
      'label_6',
      'label_5',
      'label_4',
      'label_3',
      'label_2',
      'other outcomes',
      'answered, no outcome reported',
      'voicemail',
      'no answer',
      'busy',
      'failed otherwise',
    ]);
    expect(chart.rows.at(-1)).toMatchObject({ counts: [8, 7, 6, 5, 4, 3, 3, 4, 0, 0, 0, 0], total: 40 });
    // The scale's top is the least of 1, 2, 5 x 10^k at or above the highest bar: 40 of 50 is four fifths of it.
    expect(chart.ticks.map((t) => t.label)).toEqual(['0', '25', '50']);
    const plotHeight = chart.ticks[0]!.y - chart.ticks.at(-1)!.y;
    const height = chart.bars.at(-1)!.segments.reduce((sum, s) => sum + s.height, 0);
    expect(height).toBeCloseTo((plotHeight * 40) / 50);
  });
});
