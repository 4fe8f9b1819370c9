// `callctl rules show|set <account-id>` and `callctl rules hours add|remove`: an operator switches an agency's calling
// rules on and off, sets the rule sets, the cap (<n>/24h) with its 7-day cap and scope, consent and the kinds of call,
// and replaces an account's own hours (--hours, the agency's or a client's: a client takes nothing else); each change is
// audited as the operator's with its before and after; bad values are refused in their field's words and change nothing;
// what the command line alone shows wrong (and a client given an agency's setting) is a usage error (exit 2).
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';

let app: App;
let databaseUrl: string;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
});

/** A new agency and a client of it, so that each test starts from the defaults. */
async function tenants() {
  const agency = await createTenant(app.storage);
  return { agency, client: await createClientTenant(app.storage, agency.accountId) };
}

const run = (...args: string[]) => callctl(databaseUrl, [...args, '--json'], {}, () => app.now());
const errorOf = (res: { stderr: string }) => (JSON.parse(res.stderr) as CliError).error;
const stored = async (tenant: Tenant) =>
  (await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenant.accountId } })).callingRules;
const auditOf = (tenant: Tenant) =>
  prismaOf(app).auditEntry.findMany({
    where: { accountId: tenant.accountId, action: { startsWith: 'calling_' } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { action: true, actorKind: true, detail: true },
  });
/** Audit entries as [action, detail] in one order whatever the order they were written in. */
const sorted = (entries: unknown[][]) => {
  const key = (e: unknown[]) =>
    JSON.stringify([e[0], (e[1] as Record<string, unknown>).name, (e[1] as Record<string, unknown>).before]);
  return [...entries].sort((a, b) => (key(a) < key(b) ? -1 : 1));
};
type Shown = { rules: Record<string, unknown>; changed?: boolean };

describe('callctl rules show', () => {
  it('shows {"rules"}: the defaults (off) of an agency that never chose, and a client its agency’s', async () => {
    const { agency, client } = await tenants();
    const shown = await run('rules', 'show', agency.accountId);
    expect(shown.code, shown.stderr).toBe(0);
    expect(Object.keys(shown.json())).toEqual(['rules']);
    expect(shown.json<Shown>().rules).toMatchObject({
      account_id: agency.accountId,
      account_kind: 'agency',
      agency_settings_editable: true,
      settings: { enabled: false, rule_sets: ['us', 'ca'], cap: null, consent_required: false },
      agency_hours: [],
      client_hours: null,
    });
    const ofClient = await run('rules', 'show', client.accountId);
    expect(ofClient.json<Shown>().rules).toMatchObject({
      account_kind: 'client',
      agency_id: agency.accountId,
      client_hours: [],
    });
    const human = await callctl(databaseUrl, ['rules', 'show', agency.accountId]);
    expect(human.stdout).toContain('off: calls are dialled as before');
    expect(human.stdout).toContain('This helps you comply; it is not legal advice.');
    const missing = await run('rules', 'show', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).toBe(1);
    expect(errorOf(missing)).toContain('No account 00000000-0000-4000-8000-000000000000');
    expect((await run('rules', 'show')).code).toBe(2);
    expect((await run('rules', 'show', '--account', agency.accountId)).code).toBe(2);
  });
});

describe('callctl rules set', () => {
  it('switches on and off, sets the rule sets, the cap and its scope, keeps what is not given; audited', async () => {
    const { agency } = await tenants();
    const set = await run('rules', 'set', agency.accountId, '--on', '--rule-sets', 'us', '--cap', '3/24h',
      '--cap-7d', '10', '--cap-scope', 'account'); // prettier-ignore
    expect(set.stderr).toBe('');
    expect(Object.keys(set.json())).toEqual(['rules', 'changed']);
    expect(set.json()).toMatchObject({
      changed: true,
      rules: { settings: { enabled: true, rule_sets: ['us'], cap: { per_24h: 3, per_7d: 10, scope: 'account' } } },
    });
    const again = await run('rules', 'set', agency.accountId, '--consent-required', 'on');
    expect(again.json<Shown>().rules).toMatchObject({
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
    const same = await run('rules', 'set', agency.accountId, '--on');
    expect(same.json()).toMatchObject({ changed: false });
    const sameHuman = await callctl(databaseUrl, ['rules', 'set', agency.accountId, '--on']);
    expect(sameHuman.stdout).toContain('These were the rules already: nothing changed.');
    expect(await auditOf(agency)).toHaveLength(2);
    // --cap-7d none keeps the cap per 24 h; --cap none removes the cap; --rule-sets none; --off.
    const week = await run('rules', 'set', agency.accountId, '--cap-7d', 'none', '--cap-scope', 'agency');
    expect(week.json<Shown>().rules).toMatchObject({
      settings: { cap: { per_24h: 3, per_7d: null, scope: 'agency' } },
    });
    const none = await run('rules', 'set', agency.accountId, '--cap', 'none', '--rule-sets', 'none',
      '--consent-required', 'off', '--off'); // prettier-ignore
    expect(none.json<Shown>().rules).toMatchObject({
      settings: { enabled: false, rule_sets: [], cap: null, consent_required: false },
    });
    const upper = await run('rules', 'set', agency.accountId, '--cap', '50/24H', '--rule-sets', 'us,ca');
    expect(upper.json<Shown>().rules).toMatchObject({ settings: { rule_sets: ['us', 'ca'], cap: { per_24h: 50 } } });
  });

  it('refuses bad values in their field’s words (exit 1) and changes nothing', async () => {
    const { agency } = await tenants();
    const before = await stored(agency);
    for (const [flags, words] of [
      [['--cap', '0/24h'], 'The cap per 24 hours is a whole number from 1 to 50'],
      [['--cap', '51/24h'], 'The cap per 24 hours is a whole number from 1 to 50'],
      [['--cap', '1000000000/24h'], 'The cap per 24 hours is a whole number from 1 to 50'],
      [['--cap-7d', '5'], 'A cap per 7 days needs a cap per 24 hours too'],
      [['--cap', '4/24h', '--cap-7d', '3'], 'The cap per 7 days (3) must be at least the cap per 24 hours (4)'],
      [['--rule-sets', 'us,mx'], 'Unknown rule set "mx"'],
      [['--kinds', 'robocall'], 'Unknown kind "robocall"'],
      [['--cap', '2/24h', '--cap-scope', 'world'], 'The cap counts per agency or per account'],
      // The settings are refused before the hours are set: nothing changes.
      [['--on', '--rule-sets', 'mx', '--hours', 'daily 09:00-17:00'], 'Unknown rule set "mx"'],
    ] as const) {
      const res = await run('rules', 'set', agency.accountId, ...flags);
      expect(res.code, flags.join(' ')).toBe(1);
      expect(errorOf(res)).toContain(words);
    }
    expect(await stored(agency)).toEqual(before);
    expect(await auditOf(agency)).toEqual([]);
  });

  it.each([
    [['--on', '--off'], '--on and --off: give one of them'],
    [['--consent-required', 'yes'], '--consent-required: expected on or off, not "yes"'],
    [['--cap', '3'], '--cap: expected <n>/24h (e.g. 3/24h) or none, not "3"'],
    [['--cap', '3/7d'], '--cap: expected <n>/24h'],
    [['--cap', 'three/24h'], '--cap: expected <n>/24h'],
    [[], 'Nothing to change: give one of --hours, --on, --off'],
    [['--hours', 'someday 09:00-17:00'], '--hours: Invalid calling window "someday 09:00-17:00"'],
    [['--hours', 'mon-fri 9-17'], 'expected "<days> <HH:MM>-<HH:MM>"'],
    [['--hours', 'mon 18:00-09:00'], 'The end (09:00) must be after the start (18:00)'],
    [['--hours', 'none', '--hours', 'mon 09:00-10:00'], '--hours none (no own hours) cannot be given with other'],
    [Array.from({ length: 11 }, () => ['--hours', 'mon 09:00-10:00']).flat(), 'at most 10 rules of its own'],
    [['--enabled', 'on'], "Unknown option '--enabled'"],
    [['--cap-24h', '3'], "Unknown option '--cap-24h'"],
    [['--account', 'x', '--on'], 'Unknown flag --account'],
    [['--name', 'x', '--on'], 'Unknown flag --name for "rules set"'],
  ])('%j is a usage error (exit 2) and changes nothing', async (flags, words) => {
    const { agency } = await tenants();
    const res = await run('rules', 'set', agency.accountId, ...flags);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(errorOf(res)).toContain(words);
    expect(await stored(agency)).toBeNull();
  });

  it('a missing <account-id> is a usage error; an unknown account is refused (exit 1)', async () => {
    const missing = await run('rules', 'set', '--on');
    expect(missing.code).toBe(2);
    expect(errorOf(missing)).toContain('Missing <account-id> for "rules set"');
    const human = await callctl(databaseUrl, ['rules', 'set', '--on']);
    expect(human.stderr).toContain('usage: callctl rules set <account-id> [--on|--off]');
    const unknown = await run('rules', 'set', '00000000-0000-4000-8000-000000000000', '--hours', 'none');
    expect(unknown.code).toBe(1);
    expect(errorOf(unknown)).toContain('No account 00000000-0000-4000-8000-000000000000');
  });

  it('replaces an agency’s own hours with --hours (named Hours 1, 2, ...), beside settings; none removes them', async () => {
    const { agency } = await tenants();
    const set = await run('rules', 'set', agency.accountId, '--on', '--hours', 'mon-fri 09:00-17:00',
      '--hours', 'sat,sun 10:00-14:00', '--hours', 'daily 20:00-24:00'); // prettier-ignore
    expect(set.code, set.stderr).toBe(0);
    expect(set.json()).toMatchObject({
      changed: true,
      rules: {
        settings: { enabled: true },
        agency_hours: [
          { name: 'Hours 1', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' },
          { name: 'Hours 2', hours: 'sat,sun 10:00-14:00' },
          { name: 'Hours 3', hours: 'daily 20:00-24:00' },
        ],
      },
    });
    expect(await stored(agency)).toMatchObject({ enabled: true, own_rules: [{ name: 'Hours 1' }, {}, {}] });
    // The same hours again: nothing changes, nothing is audited.
    const same = await run('rules', 'set', agency.accountId, '--hours', 'mon-fri 09:00-17:00',
      '--hours', 'sat,sun 10:00-14:00', '--hours', 'daily 20:00-24:00'); // prettier-ignore
    expect(same.json()).toMatchObject({ changed: false });
    const fewer = await run('rules', 'set', agency.accountId, '--hours', 'mon-fri 08:00-18:00');
    expect(fewer.json<Shown>().rules.agency_hours).toEqual([
      {
        name: 'Hours 1',
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        from: '08:00',
        to: '18:00',
        hours: 'mon-fri 08:00-18:00',
      },
    ]);
    const none = await run('rules', 'set', agency.accountId, '--hours', 'none');
    expect(none.json<Shown>().rules).toMatchObject({ agency_hours: [], settings: { enabled: true } });
    // One command's entries share its time: compared in any order.
    const entries = (await auditOf(agency)).map((e) => [e.action, e.detail]);
    const settingsChanges = entries.filter(([action]) => action === 'calling_rules_changed');
    expect(settingsChanges).toHaveLength(1);
    expect(settingsChanges[0]![1]).toMatchObject({ before: { enabled: false }, after: { enabled: true } });
    expect(sorted(entries.filter(([action]) => action !== 'calling_rules_changed'))).toEqual(
      sorted([
        ['calling_hours_added', { name: 'Hours 1', before: null, after: 'mon-fri 09:00-17:00' }],
        ['calling_hours_added', { name: 'Hours 2', before: null, after: 'sat,sun 10:00-14:00' }],
        ['calling_hours_added', { name: 'Hours 3', before: null, after: 'daily 20:00-24:00' }],
        ['calling_hours_replaced', { name: 'Hours 1', before: 'mon-fri 09:00-17:00', after: 'mon-fri 08:00-18:00' }],
        ['calling_hours_removed', { name: 'Hours 2', before: 'sat,sun 10:00-14:00', after: null }],
        ['calling_hours_removed', { name: 'Hours 3', before: 'daily 20:00-24:00', after: null }],
        ['calling_hours_removed', { name: 'Hours 1', before: 'mon-fri 08:00-18:00', after: null }],
      ]),
    );
  });

  it('sets a client’s own narrower hours with --hours; any other flag on a client is a usage error', async () => {
    const { agency, client } = await tenants();
    const set = await run('rules', 'set', client.accountId, '--hours', 'daily 09:00-12:00');
    expect(set.code, set.stderr).toBe(0);
    expect(set.json()).toMatchObject({
      changed: true,
      rules: {
        account_kind: 'client',
        agency_id: agency.accountId,
        agency_settings_editable: false,
        agency_hours: [],
        client_hours: [{ name: 'Hours 1', hours: 'daily 09:00-12:00' }],
      },
    });
    expect(await stored(client)).toMatchObject({ own_rules: [{ name: 'Hours 1', days_not_allowed: [] }] });
    expect(await stored(agency)).toBeNull();
    for (const flags of [
      ['--on'],
      ['--off', '--hours', 'none'],
      ['--cap', '3/24h'],
      ['--rule-sets', 'us'],
      ['--cap-7d', '5'],
      ['--cap-scope', 'account'],
      ['--consent-required', 'on'],
      ['--kinds', 'all'],
    ]) {
      const res = await run('rules', 'set', client.accountId, ...flags);
      expect(res.code, flags.join(' ')).toBe(2);
      expect(errorOf(res)).toContain(`${client.accountId} is a client: only --hours`);
    }
    const human = await callctl(databaseUrl, ['rules', 'set', client.accountId, '--on']);
    expect(human.stderr).toContain(`set them there\nusage: callctl rules set <account-id>`);
    const shown = await run('rules', 'show', client.accountId);
    expect(shown.json<Shown>().rules).toMatchObject({ client_hours: [{ name: 'Hours 1' }] });
    const none = await run('rules', 'set', client.accountId, '--hours', 'none');
    expect(none.json<Shown>().rules).toMatchObject({ client_hours: [] });
    expect(await stored(client)).toEqual({ own_rules: [] });
    expect((await auditOf(client)).map((e) => [e.action, e.actorKind, e.detail])).toEqual([
      ['calling_hours_added', 'operator', { name: 'Hours 1', before: null, after: 'daily 09:00-12:00' }],
      ['calling_hours_removed', 'operator', { name: 'Hours 1', before: 'daily 09:00-12:00', after: null }],
    ]);
  });

  it('carries a change of the kinds of call over to every own rule, the agency’s and its clients’', async () => {
    const { agency, client } = await tenants();
    await run('rules', 'set', agency.accountId, '--hours', 'mon-fri 09:00-19:00');
    await run('rules', 'set', client.accountId, '--hours', 'daily 09:00-12:00');
    const set = await run('rules', 'set', agency.accountId, '--kinds', 'automated');
    expect(set.json<Shown>().rules).toMatchObject({ settings: { call_kinds: ['automated'] } });
    // The engine applies an own rule to a call of every kind it lists: listing a kind the calls no longer have would
    // switch the rule off.
    expect(await stored(agency)).toMatchObject({ own_rules: [{ name: 'Hours 1', applies_to: ['automated'] }] });
    expect(await stored(client)).toMatchObject({ own_rules: [{ name: 'Hours 1', applies_to: ['automated'] }] });
    // New hours take the agency's kinds.
    await run('rules', 'set', client.accountId, '--hours', 'daily 10:00-12:00');
    expect(await stored(client)).toMatchObject({ own_rules: [{ applies_to: ['automated'] }] });
    const all = await run('rules', 'set', agency.accountId, '--kinds', 'all');
    expect(all.json<Shown>().rules).toMatchObject({
      settings: { call_kinds: ['telephone_solicitation', 'telemarketing', 'automated'] },
    });
    expect(await stored(client)).toMatchObject({
      own_rules: [{ applies_to: ['telephone_solicitation', 'telemarketing', 'automated'] }],
    });
  });
});

describe('callctl rules hours add|remove', () => {
  it('adds, replaces and removes one own rule of the agency and of a client, keeping the others', async () => {
    const { agency, client } = await tenants();
    await run('rules', 'set', agency.accountId, '--hours', 'sat 09:00-12:00');
    const add = await run('rules', 'hours', 'add', agency.accountId, '--name', 'Office hours',
      '--days', 'mon-fri', '--from', '10:00', '--to', '18:00'); // prettier-ignore
    expect(add.stderr).toBe('');
    expect(add.json()).toMatchObject({ rule: { name: 'Office hours', hours: 'mon-fri 10:00-18:00' } });
    const dup = await run('rules', 'hours', 'add', agency.accountId, '--name', 'office HOURS',
      '--days', 'sat', '--from', '09:00', '--to', '12:00'); // prettier-ignore
    expect(dup.code).toBe(1);
    expect(errorOf(dup)).toContain('There is already a rule named "Office hours"');
    const replaced = await run('rules', 'hours', 'add', agency.accountId, '--name', 'Office hours',
      '--days', 'mon,wed,fri', '--from', '09:00', '--to', '17:30', '--replace'); // prettier-ignore
    expect(replaced.json()).toMatchObject({ replaced: true, rule: { hours: 'mon,wed,fri 09:00-17:30' } });
    expect((await run('rules', 'show', agency.accountId)).json<Shown>().rules.agency_hours).toMatchObject([
      { name: 'Hours 1', hours: 'sat 09:00-12:00' },
      { name: 'Office hours', hours: 'mon,wed,fri 09:00-17:30' },
    ]);
    const ofClient = await run('rules', 'hours', 'add', client.accountId, '--name', 'Mornings',
      '--days', 'daily', '--from', '09:00', '--to', '12:00'); // prettier-ignore
    expect(ofClient.json()).toMatchObject({ rule: { name: 'Mornings', hours: 'daily 09:00-12:00' } });
    const removed = await run('rules', 'hours', 'remove', agency.accountId, '--name', 'office hours');
    expect(removed.json()).toEqual({ account_id: agency.accountId, name: 'Office hours', removed: true });
    const gone = await run('rules', 'hours', 'remove', agency.accountId, '--name', 'Office hours');
    expect(gone.json()).toMatchObject({ removed: false });
    expect((await auditOf(agency)).map((e) => e.action)).toEqual([
      'calling_hours_added',
      'calling_hours_added',
      'calling_hours_replaced',
      'calling_hours_removed',
    ]);
    const noId = await run('rules', 'hours', 'remove', '--name', 'x');
    expect(noId.code).toBe(2);
    expect((await run('rules', 'hours', 'remove', agency.accountId, '--name', 'x', '--account', 'y')).code).toBe(2);
  });
});

describe('callctl rules help', () => {
  it('documents the commands and their flags', async () => {
    const help = await callctl(databaseUrl, ['rules', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'callctl rules set <account-id> [--on|--off] [--rule-sets us,ca|none] [--hours "<days> HH:MM-HH:MM"]... [--cap <n>/24h]',
    );
    expect(help.stdout).toContain('[--cap-7d <n>] [--cap-scope agency|account] [--consent-required on|off]');
    expect(help.stdout).toContain('callctl rules show <account-id>');
    expect(help.stdout).toContain('callctl rules hours add <account-id> --name <name>');
    for (const flag of ['--on ', '--off ', '--hours "<days> HH:MM-HH:MM"', '--cap <n>/24h|none', '--kinds '])
      expect(help.stdout).toContain(flag);
    expect(help.stdout).not.toContain('--enabled');
    expect(help.stdout).not.toContain('--cap-24h');
    expect(help.stdout).not.toContain('--account');
  });
});
