// `callctl dnc add|remove|list|import`: an operator's changes to an account's do-not-call list, audited as the
// operator's; the trigger refuses a number added here; a number that is not E.164 is a usage error (exit 2), an
// unknown account or file a refusal (exit 1); an import is every row or none, each bad row reported by its line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';

let app: App;
let databaseUrl: string;
let agency: Tenant;
let client: Tenant;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
  agency = await createTenant(app.storage);
  client = await createClientTenant(app.storage, agency.accountId);
});

const entries = (tenant: Tenant) =>
  prismaOf(app).doNotCallEntry.findMany({
    where: { accountId: tenant.accountId },
    orderBy: { phoneNumber: 'asc' },
    select: { phoneNumber: true, reason: true, addedBy: true },
  });

function csvFile(content: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-dnc-')), 'list.csv');
  fs.writeFileSync(file, content);
  return file;
}

describe('callctl dnc add and remove', () => {
  it('adds a number with a reason (the trigger then refuses it), says so when it already was, removes it', async () => {
    const add = await callctl(databaseUrl, [
      'dnc',
      'add',
      agency.accountId,
      '+14155550301',
      '--reason',
      'Complained by letter',
      '--json',
    ]);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(add.json()).toEqual({
      account_id: agency.accountId,
      added: true,
      phone_number: '+14155550301',
      reason: 'Complained by letter',
      added_by: 'operator',
      added_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
      waiting_calls_ended: 0,
    });
    // The agency's list covers its client.
    expect((await trigger(app, client.key, { phone_number: '+14155550301' })).json()).toEqual({
      success: false,
      error: 'Phone number is on the do-not-call list',
    });
    expect(
      await prismaOf(app).auditEntry.findMany({
        where: { accountId: agency.accountId, action: 'do_not_call_added' },
        select: { actorKind: true, detail: true },
      }),
    ).toEqual([{ actorKind: 'operator', detail: { phone_number: '+14155550301', reason: 'Complained by letter' } }]);

    const again = await callctl(databaseUrl, ['dnc', 'add', agency.accountId, '+14155550301']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^added: +false$/m);
    expect(again.stdout).toContain('It was already on the list: its entry is unchanged.');

    const remove = await callctl(databaseUrl, ['dnc', 'remove', agency.accountId, '+14155550301', '--json']);
    expect(remove.json()).toEqual({ account_id: agency.accountId, phone_number: '+14155550301', removed: true });
    expect(await entries(agency)).toEqual([]);
    expect((await trigger(app, client.key, { phone_number: '+14155550301' })).statusCode).toBe(200);
    const gone = await callctl(databaseUrl, ['dnc', 'remove', agency.accountId, '+14155550301']);
    expect(gone.code).toBe(0);
    expect(gone.stdout).toContain('It was not on the list: nothing changed.');
    expect(await prismaOf(app).auditEntry.count({ where: { action: 'do_not_call_removed' } })).toBe(1);
  });

  it('reads a number as people write it (stored in E.164); refuses what is none, a long reason, an unknown account', async () => {
    const spaced = await callctl(databaseUrl, ['dnc', 'add', agency.accountId, '+1 415 555 0302', '--json']);
    expect(spaced.code).toBe(0);
    expect(spaced.json()).toMatchObject({ added: true, phone_number: '+14155550302' });
    await callctl(databaseUrl, ['dnc', 'remove', agency.accountId, '+14155550302']);
    const none = await callctl(databaseUrl, ['dnc', 'add', agency.accountId, 'call me', '--json']);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stderr)).toEqual<CliError>({
      error: '"call me" is not a phone number: write it in E.164 (like +14155552671), or as it is dialled in US',
    });
    const longReason = await callctl(databaseUrl, [
      'dnc',
      'add',
      agency.accountId,
      '+14155550302',
      '--reason',
      'x'.repeat(501),
    ]);
    expect(longReason.code).toBe(2);
    expect(longReason.stderr).toContain('A reason has at most 500 characters');
    const unknown = await callctl(databaseUrl, [
      'dnc',
      'add',
      '00000000-0000-4000-8000-000000000000',
      '+14155550302',
      '--json',
    ]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr)).toEqual({ error: 'No account 00000000-0000-4000-8000-000000000000' });
    expect(await entries(agency)).toEqual([]);
  });
});

describe('callctl dnc import and list', () => {
  it('imports a file, skipping numbers already listed or repeated; lists the list with the agency noted', async () => {
    await callctl(databaseUrl, ['dnc', 'add', client.accountId, '+14155550310', '--reason', 'first']);
    const file = csvFile(
      'phone_number,reason\n+14155550310,again\n+14155550311,"Said ""no"""\n+14155550312,\n+14155550311,x\n',
    );
    const res = await callctl(databaseUrl, ['dnc', 'import', client.accountId, file, '--json']);
    expect(res.stderr).toBe('');
    expect(res.json()).toEqual({
      account_id: client.accountId,
      rows: 4,
      added: 2,
      already_listed: 1,
      duplicates_in_file: 1,
      waiting_calls_ended: 0,
      bad_rows: 0,
      problems: [],
    });
    expect(await entries(client)).toEqual([
      { phoneNumber: '+14155550310', reason: 'first', addedBy: 'operator' },
      { phoneNumber: '+14155550311', reason: 'Said "no"', addedBy: 'operator' },
      { phoneNumber: '+14155550312', reason: null, addedBy: 'operator' },
    ]);
    expect(
      await prismaOf(app).auditEntry.findMany({ where: { action: 'do_not_call_imported' }, select: { detail: true } }),
    ).toEqual([{ detail: { file: 'list.csv', rows: 4, added: 2, already_listed: 1, duplicates_in_file: 1 } }]);

    const list = await callctl(databaseUrl, ['dnc', 'list', client.accountId, '--json']);
    expect(list.json()).toMatchObject({
      account_id: client.accountId,
      covered_by_agency: agency.accountId,
      count: 3,
      entries: [
        { phone_number: '+14155550310', reason: 'first', added_by: 'operator' },
        { phone_number: '+14155550311', reason: 'Said "no"', added_by: 'operator' },
        { phone_number: '+14155550312', reason: null, added_by: 'operator' },
      ],
    });
    const human = await callctl(databaseUrl, ['dnc', 'list', client.accountId]);
    expect(human.stdout).toMatch(/^3 numbers on the list of /);
    expect(human.stdout).toMatch(/^ {2}phone number {2}reason/m);
    expect(human.stdout).toContain(`The agency's list covers this client too: callctl dnc list ${agency.accountId}`);
  });

  it('imports nothing from a file with bad rows and names each by its line (exit 1)', async () => {
    const before = await entries(client);
    const file = csvFile('phone_number,reason\n+14155550320,ok\n+1415555032,short\nnot a number,x\n');
    const res = await callctl(databaseUrl, ['dnc', 'import', client.accountId, file]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`Nothing was imported from ${file}:`);
    expect(res.stderr).toContain('line 3: "+1415555032" is not a phone number: write it in E.164');
    expect(res.stderr).toContain('line 4: "not a number" is not a phone number: write it in E.164');
    expect(await entries(client)).toEqual(before);
    // --skip-bad-rows: the good row, the bad ones reported.
    const some = await callctl(databaseUrl, ['dnc', 'import', client.accountId, file, '--skip-bad-rows', '--json']);
    expect(some.code).toBe(0);
    expect(some.json()).toMatchObject({
      added: 1,
      bad_rows: 2,
      problems: [
        'line 3: "+1415555032" is not a phone number: write it in E.164 (like +14155552671), or as it is dialled in US',
        'line 4: "not a number" is not a phone number: write it in E.164 (like +14155552671), or as it is dialled in US',
      ],
    });
    expect((await entries(client)).map((e) => e.phoneNumber)).toContain('+14155550320');
    const missing = await callctl(databaseUrl, ['dnc', 'import', client.accountId, '/no/such/file.csv', '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual({ error: 'No file /no/such/file.csv' });
  });

  it('is in the help', async () => {
    const help = await callctl(databaseUrl, ['dnc', '--help']);
    expect(help.code).toBe(0);
    for (const usage of [
      'callctl dnc add <account-id> <number> [--reason <text>]',
      'callctl dnc remove <account-id> <e164>',
      'callctl dnc list <account-id>',
      'callctl dnc import <account-id> <file.csv> [--skip-bad-rows]',
    ])
      expect(help.stdout).toContain(usage);
  });
});
