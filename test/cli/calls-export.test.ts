// `callctl calls export` (the consent export for an audit) and the calling rules in `callctl calls show`: the file
// holds the period's calls of the account's scope (an agency with its clients; a client with the calls listed for it)
// or of all, with their consent and last decision; a bad period is a usage error and writes no file; an unknown
// account writes none either. `calls show` prints the region, the consent (escaped) and each decision record.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl } from '../helpers/cli.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { decisionRecord, insertComplianceCall } from '../helpers/seed/compliance-calls.js';

let app: App;
let databaseUrl: string;
let dir: string;
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const calls = {} as Record<'a' | 'a1' | 'listed' | 'b' | 'outside', string>;

const run = (args: string[]) => callctl(databaseUrl, args, {}, app.now);
async function exportedIds(file: string): Promise<string[]> {
  const rows = parse<Record<string, string>>(await fs.readFile(file, 'utf8'), { bom: true, columns: true });
  return rows.map((r) => r.call_id!);
}

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp({ clock: () => new Date('2057-08-20T12:00:00Z') }));
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-calls-export-'));
  tenants.A = await createTenant(app.storage, { name: 'Agency A' });
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client A1' });
  tenants.B = await createTenant(app.storage, { name: 'Agency B' });
  const prisma = prismaOf(app);
  calls.a = await insertComplianceCall(prisma, {
    accountId: tenants.A.accountId,
    agentId: tenants.A.agentId,
    createdAt: new Date('2057-08-01T09:00:00Z'),
    status: 'initiated',
    heldBy: 'calling_rules',
    notBefore: new Date('2057-08-21T12:00:00Z'),
    recipientRegion: 'US-FL',
    consent: {
      type: 'inquiry',
      obtained_at: '2057-07-30T10:00:00Z',
      source: 'Form \u001b[31mred\u001b[0m \u202Eevil',
      evidence_url: 'https://evidence.example/1',
    },
    compliance: [decisionRecord({ checked_at: '2057-08-01T09:00:01.000Z' })],
  });
  calls.a1 = await insertComplianceCall(prisma, {
    accountId: tenants.A1.accountId,
    agentId: tenants.A1.agentId,
    createdAt: new Date('2057-08-02T09:00:00Z'),
  });
  calls.listed = await insertComplianceCall(prisma, {
    accountId: tenants.A.accountId,
    agentId: tenants.A1.agentId,
    listedForAccountId: tenants.A1.accountId,
    createdAt: new Date('2057-08-03T09:00:00Z'),
  });
  calls.b = await insertComplianceCall(prisma, {
    accountId: tenants.B.accountId,
    agentId: tenants.B.agentId,
    createdAt: new Date('2057-08-04T09:00:00Z'),
  });
  calls.outside = await insertComplianceCall(prisma, {
    accountId: tenants.A.accountId,
    agentId: tenants.A.agentId,
    createdAt: new Date('2057-08-11T00:00:00Z'),
  });
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('callctl calls export', () => {
  it('writes an agency’s calls and its clients’ for the period, with the consent and the last decision', async () => {
    const file = path.join(dir, 'agency.csv');
    const out = await run([
      'calls',
      'export',
      '--from',
      '2057-08-01',
      '--to',
      '2057-08-10',
      '--account',
      tenants.A.accountId,
      '--out',
      file,
      '--json',
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json()).toEqual({
      file,
      account_id: tenants.A.accountId,
      from: '2057-08-01T00:00:00.000Z',
      to: '2057-08-11T00:00:00.000Z',
      calls: 3,
    });
    expect(await exportedIds(file)).toEqual([calls.a, calls.a1, calls.listed]);
    const [row] = parse<Record<string, string>>(await fs.readFile(file, 'utf8'), { bom: true, columns: true });
    expect(row).toMatchObject({
      account: 'Agency A',
      recipient_region: 'US-FL',
      consent_type: 'inquiry',
      consent_obtained_at: '2057-07-30T10:00:00Z',
      last_verdict: 'held',
      last_checked_at: '2057-08-01T09:00:01.000Z',
      last_reasons: 'US-FL: 8:00–20:00, 07:42 now in America/New_York',
    });
    await expect(fs.stat(`${file}.partial`)).rejects.toThrow();
  });

  it('writes a client’s own calls and those listed for it; without --account, every account’s', async () => {
    const client = path.join(dir, 'client.csv');
    expect(
      (
        await run([
          'calls',
          'export',
          '--from',
          '2057-08-01',
          '--to',
          '2057-08-10',
          '--account',
          tenants.A1.accountId,
          '--out',
          client,
        ])
      ).code,
    ).toBe(0);
    expect(await exportedIds(client)).toEqual([calls.a1, calls.listed]);
    const all = path.join(dir, 'all.csv');
    const out = await run(['calls', 'export', '--from', '2057-08-01', '--to', '2057-08-11', '--out', all]);
    expect(out.code, out.stderr).toBe(0);
    expect(await exportedIds(all)).toEqual([calls.a, calls.a1, calls.listed, calls.b, calls.outside]);
  });

  it('refuses a bad period or an unknown account, writing nothing', async () => {
    const file = path.join(dir, 'refused.csv');
    for (const [from, to] of [
      ['2057-05-01', '2057-08-10'],
      ['2057-08-10', '2057-08-01'],
      ['2057-02-30', '2057-03-01'],
    ]) {
      const out = await run(['calls', 'export', '--from', from!, '--to', to!, '--out', file]);
      expect(out.code, `${from}..${to}`).toBe(2);
    }
    expect((await run(['calls', 'export', '--from', '2057-08-01', '--out', file])).stderr).toContain('Missing --to');
    const unknown = await run([
      'calls',
      'export',
      '--from',
      '2057-08-01',
      '--to',
      '2057-08-02',
      '--account',
      '00000000-0000-4000-8000-000000000000',
      '--out',
      file,
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No account 00000000-0000-4000-8000-000000000000');
    await expect(fs.stat(file)).rejects.toThrow();
  });
});

describe('callctl calls show', () => {
  it('prints the region, the consent escaped, the hold and each decision record', async () => {
    const { code, stdout } = await run(['calls', 'show', calls.a]);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const start = lines.indexOf('calling rules:');
    expect(start).toBeGreaterThan(0);
    expect(lines.slice(start, start + 14)).toEqual([
      'calling rules:',
      '  recipient region: US-FL',
      '  held by: calling_rules (until not_before)',
      '  consent: inquiry, obtained 2057-07-30T10:00:00Z',
      '    source: "Form \\\\u001b[31mred\\\\u001b[0m \\\\u202eevil"',
      '    evidence: https://evidence.example/1',
      '  attempt 1: held, checked 2057-08-01T09:00:01.000Z, rules 2055.1',
      '    reasons:',
      '      US-FL: 8:00–20:00, 07:42 now in America/New_York',
      '    cap: 1 of 3 in 24h (agency); do not call: clear; consent: on_record',
      '    candidates:',
      '      region  timezone          local time        allowed  rule',
      '      US-FL   America/New_York  2055-03-14 07:42  no       US-FL hours',
      '      US-FL   America/Chicago   2055-03-14 06:42  no       -',
    ]);
    expect(stdout).not.toContain('\u001b[31m');
  });

  it('shows no calling-rules section for a call with nothing recorded, and --json carries them as stored', async () => {
    expect((await run(['calls', 'show', calls.b])).stdout).not.toContain('calling rules');
    const { call } = (await run(['calls', 'show', calls.a, '--json'])).json<{ call: Record<string, unknown> }>();
    expect(call.recipient_region).toBe('US-FL');
    expect(call.held_by).toBe('calling_rules');
    expect((call.consent as { type: string }).type).toBe('inquiry');
    expect((call.compliance as unknown[]).length).toBe(1);
  });
});
