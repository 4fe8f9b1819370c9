// "Export calls with consent (CSV)": the calls of a period the viewer may see, oldest first, with their consent and
// last decision; the period's bounds (days in the viewer's zone, both included, at most 93), bad periods answered 400,
// batches that neither repeat nor skip calls created at one instant, and tenancy: another tenant's calls never, an
// agency's clients' always, a client's calls listed for it by its agency's key.
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { CALLS_CSV_COLUMNS } from '../../src/domain/calls-csv.js';
import { EXPORT_BATCH_CALLS } from '../../src/storage/calls-export.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { insertCalls } from '../helpers/seed.js';
import { decisionRecord, insertComplianceCall } from '../helpers/seed/compliance-calls.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

const NOW = new Date('2056-05-20T12:00:00Z');
const CONSENT = {
  type: 'express_written',
  obtained_at: '2056-04-01T09:30:00-04:00',
  source: '=cmd|"/c calc"!A1, web form',
  evidence_url: 'https://evidence.example/f?id=7',
};

let app: App;
const tenants = {} as Record<'A' | 'A1' | 'A2' | 'B', Tenant>;
const visitors = {} as Record<'A' | 'A1' | 'B', Visitor>;
const calls = {} as Record<'consented' | 'first' | 'last' | 'before' | 'after' | 'a1' | 'a2' | 'listed' | 'b', string>;
let bulk: string[] = [];

/** The export of `from`..`to` as `visitor` gets it: its answer and, for a 200, its rows as records by column. */
async function exported(visitor: Visitor, from: string, to: string) {
  const answer = await visitor.get(`/dashboard/calls/export.csv?from=${from}&to=${to}`);
  const rows = answer.status === 200 ? parse<Record<string, string>>(answer.body, { bom: true, columns: true }) : [];
  return { ...answer, rows, ids: rows.map((r) => r.call_id!) };
}

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => NOW, env: DASHBOARD_ENV }));
  tenants.A = await createTenant(app.storage, { name: 'Agency A', agentName: '+Agent of A' });
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client A1' });
  tenants.A2 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client A2' });
  tenants.B = await createTenant(app.storage, { name: 'Agency B' });
  const prisma = prismaOf(app);
  const of = (t: Tenant) => ({ accountId: t.accountId, agentId: t.agentId });
  calls.consented = await insertComplianceCall(prisma, {
    ...of(tenants.A),
    createdAt: new Date('2056-05-02T10:00:00Z'),
    name: '@SUM(1+1)',
    recipientRegion: 'US-FL',
    consent: CONSENT,
    compliance: [
      decisionRecord({ checked_at: '2056-05-02T10:00:01.000Z' }),
      decisionRecord({
        checked_at: '2056-05-02T12:00:00.000Z',
        verdict: 'allowed',
        reasons: ['first reason', 'second reason'],
      }),
    ],
  });
  // The period's edges: its first millisecond and its last are in, the millisecond before and the one after are not.
  calls.first = await insertComplianceCall(prisma, { ...of(tenants.A), createdAt: new Date('2056-05-01T00:00:00Z') });
  calls.before = await insertComplianceCall(prisma, {
    ...of(tenants.A),
    createdAt: new Date('2056-04-30T23:59:59.999Z'),
  });
  calls.last = await insertComplianceCall(prisma, {
    ...of(tenants.A),
    createdAt: new Date('2056-05-10T23:59:59.999Z'),
  });
  calls.after = await insertComplianceCall(prisma, { ...of(tenants.A), createdAt: new Date('2056-05-11T00:00:00Z') });
  calls.a1 = await insertComplianceCall(prisma, { ...of(tenants.A1), createdAt: new Date('2056-05-03T00:00:00Z') });
  calls.a2 = await insertComplianceCall(prisma, { ...of(tenants.A2), createdAt: new Date('2056-05-03T00:00:01Z') });
  // An agency's key on A1's agent: the agency's call, listed for A1.
  calls.listed = await insertComplianceCall(prisma, {
    accountId: tenants.A.accountId,
    agentId: tenants.A1.agentId,
    listedForAccountId: tenants.A1.accountId,
    createdAt: new Date('2056-05-04T00:00:00Z'),
  });
  calls.b = await insertComplianceCall(prisma, { ...of(tenants.B), createdAt: new Date('2056-05-05T00:00:00Z') });
  // More than a batch at one instant, in B's scope: the keyset on (created_at, id) neither repeats nor skips.
  bulk = await insertCalls(prisma, {
    ...of(tenants.B),
    count: EXPORT_BATCH_CALLS + 205,
    createdAt: new Date('2056-05-06T00:00:00Z'),
  });
  for (const name of ['A', 'A1', 'B'] as const) {
    await createUserWithPassword(app.storage, tenants[name].accountId, `${name.toLowerCase()}@export.example`);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.10.0.${Object.keys(visitors).length}`;
    expect((await visitors[name].signIn(`${name.toLowerCase()}@export.example`)).status).toBe(303);
  }
});

describe('the consent export', () => {
  it('is a CSV download of the period’s calls, oldest first, with the consent and the last decision', async () => {
    const answer = await exported(visitors.A, '2056-05-01', '2056-05-10');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(answer.headers['content-disposition']).toBe(
      'attachment; filename="calls-with-consent-2056-05-01-to-2056-05-10.csv"',
    );
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.body.startsWith('\ufeff"call_id","created_at"')).toBe(true);
    expect(answer.body.split('\r\n')[0]).toBe(`\ufeff${CALLS_CSV_COLUMNS.map((c) => `"${c}"`).join(',')}`);
    expect(answer.ids).toEqual([calls.first, calls.consented, calls.a1, calls.a2, calls.listed, calls.last]);
    const row = answer.rows.find((r) => r.call_id === calls.consented)!;
    expect(row).toEqual({
      call_id: calls.consented,
      created_at: '2056-05-02T10:00:00.000Z',
      account: 'Agency A',
      // Free text that a spreadsheet would run is defused with an apostrophe.
      agent: "'+Agent of A",
      phone_number: '+13055550123',
      name: "'@SUM(1+1)",
      status: 'completed',
      recipient_region: 'US-FL',
      consent_type: 'express_written',
      consent_obtained_at: '2056-04-01T09:30:00-04:00',
      consent_source: `'${CONSENT.source}`,
      consent_evidence_url: CONSENT.evidence_url,
      last_verdict: 'allowed',
      last_checked_at: '2056-05-02T12:00:00.000Z',
      last_reasons: 'first reason; second reason',
    });
    // A call without rules' columns: its cells are empty, not missing.
    expect(answer.rows.find((r) => r.call_id === calls.first)).toMatchObject({
      recipient_region: '',
      consent_type: '',
      last_verdict: '',
      last_reasons: '',
    });
    // A call listed for a client shows under that client.
    expect(answer.rows.find((r) => r.call_id === calls.listed)?.account).toBe('Client A1');
  });

  it('never holds another tenant’s calls: a client has its own and those listed for it, an agency its own', async () => {
    const a1 = await exported(visitors.A1, '2056-05-01', '2056-05-10');
    expect(a1.ids).toEqual([calls.a1, calls.listed]);
    const b = await exported(visitors.B, '2056-05-01', '2056-05-10');
    expect(b.ids).not.toContain(calls.consented);
    expect(b.ids.filter((id) => !bulk.includes(id))).toEqual([calls.b]);
  });

  it('reads more than a batch at one instant whole, each call once', async () => {
    const { ids } = await exported(visitors.B, '2056-05-06', '2056-05-06');
    expect(ids.length).toBe(bulk.length);
    expect(new Set(ids)).toEqual(new Set(bulk));
    expect([...ids].sort()).toEqual(ids);
  });

  it('takes up to 93 days, and answers 400 with the reason for anything else', async () => {
    expect((await exported(visitors.A, '2056-02-18', '2056-05-20')).status).toBe(200);
    for (const [from, to, reason] of [
      ['2056-02-17', '2056-05-20', 'at most 93 days'],
      ['2056-05-10', '2056-05-01', 'ends before it starts'],
      ['2056-02-30', '2056-03-01', '"2056-02-30" is not a day'],
      ['2056-05-01T10:00', '2056-05-02', 'YYYY-MM-DD'],
      ['yesterday', '2056-05-02', 'YYYY-MM-DD'],
    ] as const) {
      const answer = await exported(visitors.A, from, to);
      expect(answer.status, `${from}..${to}`).toBe(400);
      expect(answer.body.replace(/&quot;/g, '"').replace(/&#39;/g, "'")).toContain(reason);
    }
    expect((await visitors.A.get('/dashboard/calls/export.csv')).status).toBe(400);
    expect((await visitors.A.get('/dashboard/calls/export.csv?from=2056-05-01')).status).toBe(400);
  });

  it('reads the period’s days in the viewer’s time zone, local midnight to local midnight', async () => {
    await createUserWithPassword(app.storage, tenants.A.accountId, 'a-ny@export.example');
    const ny = new Visitor(app);
    ny.ip = '10.10.0.9';
    expect((await ny.signIn('a-ny@export.example')).status).toBe(303);
    expect(
      (await ny.submit('/dashboard/account', '/dashboard/account/time-zone', { timezone: 'America/New_York' })).status,
    ).toBe(303);
    // New York in May is UTC-4: the period is [05-01 04:00Z, 05-11 04:00Z).
    const { status, ids } = await exported(ny, '2056-05-01', '2056-05-10');
    expect(status).toBe(200);
    expect(ids).toEqual([calls.consented, calls.a1, calls.a2, calls.listed, calls.last, calls.after]);
  });

  it('is for signed-in users only', async () => {
    const stranger = new Visitor(app);
    const answer = await stranger.get('/dashboard/calls/export.csv?from=2056-05-01&to=2056-05-10');
    expect(answer.status).toBe(303);
    expect(answer.body).not.toContain(calls.consented);
  });
});
