// `callctl rules show|set` and `callctl rules hours add|remove`: an operator switches an agency's calling rules on,
// sets the cap and its scope, adds and removes own hours (the agency's and a client's), each change audited as the
// operator's with its before and after; a client's settings are its agency's (set there, refused on the client);
// bad values are refused with the field's words and change nothing; a wrong flag is a usage error (exit 2).
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';

let app: App;
let databaseUrl: string;
let agency: Tenant;
let client: Tenant;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
  agency = await createTenant(app.storage);
  client = await createClientTenant(app.storage, agency.accountId);
});

const run = (...args: string[]) => callctl(databaseUrl, [...args, '--json'], {}, () => app.now());
const stored = async (tenant: Tenant) =>
  (await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenant.accountId } })).callingRules;
const auditOf = (tenant: Tenant) =>
  prismaOf(app).auditEntry.findMany({
    where: { accountId: tenant.accountId, action: { startsWith: 'calling_' } },
    orderBy: { createdAt: 'asc' },
    select: { action: true, actorKind: true, detail: true },
  });

describe('callctl rules', () => {
  it('shows the defaults (off) for an agency that never chose, and a client its agency’s', async () => {
    const shown = await run('rules', 'show', '--account', agency.accountId);
    expect(shown.code).toBe(0);
    expect(shown.json()).toMatchObject({
      account_id: agency.accountId,
      account_kind: 'agency',
      agency_settings_editable: true,
      settings: { enabled: false, rule_sets: ['us', 'ca'], cap: null, consent_required: false },
      agency_hours: [],
      client_hours: null,
    });
    const ofClient = await run('rules', 'show', '--account', client.accountId);
    expect(ofClient.json()).toMatchObject({ account_kind: 'client', agency_id: agency.accountId, client_hours: [] });
    const human = await callctl(databaseUrl, ['rules', 'show', '--account', agency.accountId]);
    expect(human.stdout).toContain('off: calls are dialled as before');
    expect(human.stdout).toContain('This helps you comply; it is not legal advice.');
  });

  it('switches on, sets a cap and its scope, keeps what is not given; audited with before and after', async () => {
    const set = await run(
      'rules',
      'set',
      '--account',
      agency.accountId,
      '--enabled',
      'on',
      '--rule-sets',
      'us',
      '--cap-24h',
      '3',
      '--cap-7d',
      '10',
      '--cap-scope',
      'account',
    );
    expect(set.stderr).toBe('');
    expect(set.json()).toMatchObject({
      changed: true,
      settings: { enabled: true, rule_sets: ['us'], cap: { per_24h: 3, per_7d: 10, scope: 'account' } },
    });
    const again = await run('rules', 'set', '--account', agency.accountId, '--consent-required', 'on');
    expect(again.json()).toMatchObject({
      settings: { enabled: true, rule_sets: ['us'], cap: { per_24h: 3 }, consent_required: true },
    });
    expect(await stored(agency)).toMatchObject({ enabled: true, consent_required: true });
    const entries = await auditOf(agency);
    expect(entries.map((e) => [e.action, e.actorKind])).toEqual([
      ['calling_rules_changed', 'operator'],
      ['calling_rules_changed', 'operator'],
    ]);
    expect(entries[0]!.detail).toMatchObject({
      before: { enabled: false, cap: null },
      after: { enabled: true, rule_sets: ['us'], cap: '3 per 24 h, 10 per 7 days, per account' },
    });
    // The same settings again change nothing and write nothing.
    const same = await run('rules', 'set', '--account', agency.accountId, '--enabled', 'on');
    expect(same.json()).toMatchObject({ changed: false });
    expect(await auditOf(agency)).toHaveLength(2);
    // none removes the cap.
    const none = await run('rules', 'set', '--account', agency.accountId, '--cap-24h', 'none');
    expect(none.json()).toMatchObject({ settings: { cap: null } });
  });

  it('refuses bad values in their field’s words and changes nothing', async () => {
    const before = await stored(agency);
    for (const [flags, words] of [
      [['--cap-24h', '0'], 'The cap per 24 hours is a whole number from 1 to 50'],
      [['--cap-24h', '1000000000'], 'The cap per 24 hours is a whole number from 1 to 50'],
      [['--cap-7d', '5'], 'A cap per 7 days needs a cap per 24 hours too'],
      [['--rule-sets', 'us,mx'], 'Unknown rule set "mx"'],
      [['--kinds', 'robocall'], 'Unknown kind "robocall"'],
      [['--cap-24h', '2', '--cap-scope', 'world'], 'The cap counts per agency or per account'],
    ] as const) {
      const res = await run('rules', 'set', '--account', agency.accountId, ...flags);
      expect(res.code, flags.join(' ')).toBe(1);
      expect(JSON.parse(res.stderr) as CliError).toEqual({ error: expect.stringContaining(words) as string });
    }
    const usage = await run('rules', 'set', '--account', agency.accountId, '--enabled', 'yes');
    expect(usage.code).toBe(2);
    const nothing = await run('rules', 'set', '--account', agency.accountId);
    expect(nothing.code).toBe(2);
    expect(await stored(agency)).toEqual(before);
  });

  it('refuses to set a client’s settings (its agency’s) and an unknown account', async () => {
    const res = await run('rules', 'set', '--account', client.accountId, '--enabled', 'on');
    expect(res.code).toBe(1);
    expect((JSON.parse(res.stderr) as CliError).error).toContain('is a client: its calling rules are its agency');
    const missing = await run('rules', 'show', '--account', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).toBe(1);
    expect(await stored(client)).toBeNull();
  });

  it('adds, replaces and removes own hours of the agency and of a client', async () => {
    const add = await run(
      'rules',
      'hours',
      'add',
      '--account',
      agency.accountId,
      '--name',
      'Office hours',
      '--days',
      'mon-fri',
      '--from',
      '10:00',
      '--to',
      '18:00',
    );
    expect(add.stderr).toBe('');
    expect(add.json()).toMatchObject({ rule: { name: 'Office hours', hours: 'mon-fri 10:00-18:00' } });
    const dup = await run('rules', 'hours', 'add', '--account', agency.accountId, '--name', 'office HOURS',
      '--days', 'sat', '--from', '09:00', '--to', '12:00'); // prettier-ignore
    expect(dup.code).toBe(1);
    expect((JSON.parse(dup.stderr) as CliError).error).toContain('There is already a rule named "Office hours"');
    const replaced = await run('rules', 'hours', 'add', '--account', agency.accountId, '--name', 'Office hours',
      '--days', 'mon,wed,fri', '--from', '09:00', '--to', '17:30', '--replace'); // prettier-ignore
    expect(replaced.json()).toMatchObject({ replaced: true, rule: { hours: 'mon,wed,fri 09:00-17:30' } });
    const ofClient = await run('rules', 'hours', 'add', '--account', client.accountId, '--name', 'Mornings',
      '--days', 'daily', '--from', '09:00', '--to', '12:00'); // prettier-ignore
    expect(ofClient.json()).toMatchObject({ rule: { name: 'Mornings', hours: 'daily 09:00-12:00' } });
    expect(await stored(client)).toMatchObject({ own_rules: [{ name: 'Mornings', days_not_allowed: [] }] });
    const bad = await run('rules', 'hours', 'add', '--account', client.accountId, '--name', 'Late',
      '--days', 'mon', '--from', '18:00', '--to', '09:00'); // prettier-ignore
    expect((JSON.parse(bad.stderr) as CliError).error).toContain('The end (09:00) must be after the start (18:00)');

    const removed = await run('rules', 'hours', 'remove', '--account', agency.accountId, '--name', 'office hours');
    expect(removed.json()).toEqual({ account_id: agency.accountId, name: 'Office hours', removed: true });
    const gone = await run('rules', 'hours', 'remove', '--account', agency.accountId, '--name', 'Office hours');
    expect(gone.json()).toMatchObject({ removed: false });
    expect((await auditOf(agency)).map((e) => e.action).slice(-3)).toEqual([
      'calling_hours_added',
      'calling_hours_replaced',
      'calling_hours_removed',
    ]);
    expect((await auditOf(client)).map((e) => [e.action, e.detail])).toEqual([
      ['calling_hours_added', { name: 'Mornings', before: null, after: 'daily 09:00-12:00' }],
    ]);
  });

  it('carries a change of the kinds of call over to every own rule, the agency’s and its clients’', async () => {
    await run('rules', 'hours', 'add', '--account', agency.accountId, '--name', 'Weekdays',
      '--days', 'mon-fri', '--from', '09:00', '--to', '19:00'); // prettier-ignore
    const set = await run('rules', 'set', '--account', agency.accountId, '--kinds', 'automated');
    expect(set.json()).toMatchObject({ settings: { call_kinds: ['automated'] } });
    // The engine applies an own rule to a call of every kind it lists: listing a kind the calls no longer have would
    // switch the rule off.
    expect(await stored(agency)).toMatchObject({ own_rules: [{ name: 'Weekdays', applies_to: ['automated'] }] });
    expect(await stored(client)).toMatchObject({ own_rules: [{ name: 'Mornings', applies_to: ['automated'] }] });
    const all = await run('rules', 'set', '--account', agency.accountId, '--kinds', 'all');
    expect(all.json()).toMatchObject({
      settings: { call_kinds: ['telephone_solicitation', 'telemarketing', 'automated'] },
    });
    expect(await stored(client)).toMatchObject({
      own_rules: [{ applies_to: ['telephone_solicitation', 'telemarketing', 'automated'] }],
    });
  });

  it('documents the commands in help', async () => {
    const help = await callctl(databaseUrl, ['rules', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('callctl rules set --account <agency-id>');
    expect(help.stdout).toContain('callctl rules hours add --account <account-id>');
  });
});
