// `callctl calls export <account-id>` (the consent export for an audit) and the calling rules in `callctl calls show`:
// the CSV holds the period's calls of the account's scope (an agency with its clients; a client with the calls listed
// for it) with their consent and last decision, on stdout (the CSV alone, byte for byte) or in the --out file (written
// whole, then the result object); a bad period or a missing id is a usage error and writes nothing; an unknown account
// writes nothing either. `calls show` prints the region, the consent (escaped) and each decision record.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { runCli } from '../../src/cli/main.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { spawnChild } from '../helpers/child-processes.js';
import { callctl } from '../helpers/cli.js';
import { testSecretsKey } from '../helpers/database.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { decisionRecord, insertComplianceCall } from '../helpers/seed/compliance-calls.js';

let app: App;
let databaseUrl: string;
let dir: string;
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const calls = {} as Record<'a' | 'a1' | 'listed' | 'b' | 'b2' | 'outside', string>;

const HEADER =
  '"call_id","created_at","account","agent","phone_number","name","status","recipient_region","consent_type",' +
  '"consent_obtained_at","consent_source","consent_evidence_url","last_verdict","last_checked_at","last_reasons"';
/** Agency B's export of 2057-08-01..10, byte for byte. */
const expectedB = () =>
  [
    `\uFEFF${HEADER}`,
    `"${calls.b}","2057-08-04T09:00:00.000Z","Agency B","Test Agent","+13055550123","","completed","","","","","","","",""`,
    `"${calls.b2}","2057-08-05T10:00:00.000Z","Agency B","Test Agent","+13055550123","Ada ""the"" caller","initiated","US-FL",` +
      '"inquiry","2057-08-01T08:00:00Z","Web form, page 2","https://evidence.example/2","held","2057-08-05T10:00:01.000Z",' +
      '"US-FL: 8:00–20:00, 07:42 now in America/New_York"',
    '',
  ].join('\r\n');

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
  calls.b2 = await insertComplianceCall(prisma, {
    accountId: tenants.B.accountId,
    agentId: tenants.B.agentId,
    createdAt: new Date('2057-08-05T10:00:00Z'),
    status: 'initiated',
    name: 'Ada "the" caller',
    recipientRegion: 'US-FL',
    consent: {
      type: 'inquiry',
      obtained_at: '2057-08-01T08:00:00Z',
      source: 'Web form, page 2',
      evidence_url: 'https://evidence.example/2',
    },
    compliance: [decisionRecord({ checked_at: '2057-08-05T10:00:01.000Z' })],
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
  it('writes an agency’s calls and its clients’ for the period to --out, with the consent and the last decision', async () => {
    const file = path.join(dir, 'agency.csv');
    const out = await run(['calls', 'export', tenants.A.accountId, '--from', '2057-08-01', '--to', '2057-08-10',
      '--out', file, '--json']); // prettier-ignore
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

  it('writes a client’s own calls and those listed for it; --out for people prints the result', async () => {
    const client = path.join(dir, 'client.csv');
    const out = await run(['calls', 'export', tenants.A1.accountId, '--from', '2057-08-01', '--to', '2057-08-10',
      '--out', client]); // prettier-ignore
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`file:       ${client}\n`);
    expect(out.stdout).toContain('calls:      2\n');
    expect(await exportedIds(client)).toEqual([calls.a1, calls.listed]);
  });

  it('without --out writes the CSV alone on stdout: byte-order mark, header, rows, CRLF', async () => {
    const out = await run(['calls', 'export', tenants.B.accountId, '--from', '2057-08-01', '--to', '2057-08-10']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.stdout).toBe(expectedB());
    // Nothing in the period: the header alone.
    const empty = await run(['calls', 'export', tenants.B.accountId, '--from', '2057-09-01', '--to', '2057-09-01']);
    expect(empty.stdout).toBe(`\uFEFF${HEADER}\r\n`);
  });

  it('writes stdout’s raw bytes through the process’s writer when it has one, and nothing else', async () => {
    const chunks: Buffer[] = [];
    let text = '';
    let errors = '';
    const code = await runCli(['calls', 'export', tenants.B.accountId, '--from', '2057-08-01', '--to', '2057-08-10'], {
      env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', SECRETS_KEY: testSecretsKey() },
      now: app.now,
      stdout: (s) => (text += s),
      stderr: (s) => (errors += s),
      rawStdout: async (chunk) => {
        chunks.push(Buffer.from(chunk));
      },
    });
    expect(errors).toBe('');
    expect(code).toBe(0);
    expect(text).toBe('');
    const bytes = Buffer.concat(chunks);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.equals(Buffer.from(expectedB(), 'utf8'))).toBe(true);
  });

  it('bin/callctl.js streams the same bytes on its stdout, and nothing on stderr', async () => {
    const BIN = fileURLToPath(new URL('../../bin/callctl.js', import.meta.url));
    const args = ['calls', 'export', tenants.B.accountId, '--from', '2057-08-01', '--to', '2057-08-10'];
    const child = spawnChild(process.execPath, [BIN, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', SECRETS_KEY: testSecretsKey() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(Buffer.concat(chunks).equals(Buffer.from(expectedB(), 'utf8'))).toBe(true);
  }, 20_000);

  it('refuses a bad period, --json without --out, a missing account id or an old flag (exit 2), writing nothing', async () => {
    const file = path.join(dir, 'refused.csv');
    const A = tenants.A.accountId;
    for (const args of [
      [A, '--from', '2057-05-01', '--to', '2057-08-10', '--out', file],
      [A, '--from', '2057-08-10', '--to', '2057-08-01', '--out', file],
      [A, '--from', '2057-02-30', '--to', '2057-03-01', '--out', file],
      [A, '--from', '2057-02-30', '--to', '2057-03-01'],
      [A, '--from', '2057-08-01', '--to', '2057-08-02', '--json'],
      ['--from', '2057-08-01', '--to', '2057-08-02', '--out', file],
      [A, '--from', '2057-08-01', '--to', '2057-08-02', '--account', A, '--out', file],
      [A, '--from', '2057-08-01', '--out', file],
    ]) {
      const out = await run(['calls', 'export', ...args]);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stdout, args.join(' ')).toBe('');
    }
    const noOut = await run(['calls', 'export', A, '--from', '2057-08-01', '--to', '2057-08-02', '--json']);
    expect(noOut.stderr).toContain('--json prints one JSON object on stdout: give --out <file.csv>');
    const noId = await run(['calls', 'export', '--from', '2057-08-01', '--to', '2057-08-02']);
    expect(noId.stderr).toContain('Missing <account-id> for "calls export"');
    expect(noId.stderr).toContain('usage: callctl calls export <account-id> --from <YYYY-MM-DD> --to <YYYY-MM-DD>');
    expect((await run(['calls', 'export', A, '--from', '2057-08-01', '--out', file])).stderr).toContain('Missing --to');
    await expect(fs.stat(file)).rejects.toThrow();
  });

  it('refuses an unknown account (exit 1): no file, nothing on stdout, the error on stderr', async () => {
    const file = path.join(dir, 'unknown.csv');
    const unknown = '00000000-0000-4000-8000-000000000000';
    const toFile = await run(['calls', 'export', unknown, '--from', '2057-08-01', '--to', '2057-08-02', '--out', file]);
    expect(toFile.code).toBe(1);
    expect(toFile.stderr).toContain(`No account ${unknown}`);
    await expect(fs.stat(file)).rejects.toThrow();
    await expect(fs.stat(`${file}.partial`)).rejects.toThrow();
    const toStdout = await run(['calls', 'export', unknown, '--from', '2057-08-01', '--to', '2057-08-02']);
    expect(toStdout.code).toBe(1);
    expect(toStdout.stdout).toBe('');
    expect(toStdout.stderr).toBe(`callctl: No account ${unknown}\n`);
    const json = await run(['calls', 'export', unknown, '--from', '2057-08-01', '--to', '2057-08-02', '--json']);
    expect(json.code).toBe(2);
  });

  it('leaves another export’s .partial alone and writes nothing then (exit 1)', async () => {
    const file = path.join(dir, 'busy.csv');
    await fs.writeFile(`${file}.partial`, 'another export');
    const out = await run(['calls', 'export', tenants.B.accountId, '--from', '2057-08-01', '--to', '2057-08-10',
      '--out', file]); // prettier-ignore
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('EEXIST');
    expect(await fs.readFile(`${file}.partial`, 'utf8')).toBe('another export');
    await expect(fs.stat(file)).rejects.toThrow();
  });

  it('documents the command and its flags', async () => {
    const help = await run(['calls', 'export', '--help']);
    expect(help.stdout).toContain(
      'usage: callctl calls export <account-id> --from <YYYY-MM-DD> --to <YYYY-MM-DD> [--out <file.csv>]',
    );
    expect(help.stdout).toContain('without it, stdout');
    expect(help.stdout).not.toContain('--account');
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
