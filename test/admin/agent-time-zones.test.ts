// An agent's time zone is stored by its canonical IANA name only (issue 45, point 6), whatever the spelling given to
// createAgent, updateAgent or callctl: america/new_york is stored as America/New_York, a link as the zone it names,
// an unknown name refused. The migration that rewrote the rows stored before does what canonicalTimeZone does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getAllTimezones } from 'countries-and-timezones';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgent, updateAgent } from '../../src/admin/agents.js';
import { OPERATOR } from '../../src/admin/accounts.js';
import { AdminError } from '../../src/admin/errors.js';
import type { App } from '../../src/app.js';
import { canonicalTimeZone } from '../../src/domain/time-zones.js';
import { MIGRATIONS_DIR } from '../../src/paths.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl } from '../helpers/cli.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceAgent } from '../helpers/seed.js';

const MIGRATION = path.join(MIGRATIONS_DIR, '20261201140000_agents_canonical_time_zones', 'migration.sql');

let app: App;
let databaseUrl: string;
let tenant: Tenant;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
  tenant = await createTenant(app.storage);
});

const zoneOf = async (id: string) => (await prismaOf(app).agent.findUniqueOrThrow({ where: { id } })).timezone;

describe("an agent's time zone", () => {
  it('is stored by its canonical name, whatever the spelling given', async () => {
    const cases: [string, string][] = [
      ['america/new_york', 'America/New_York'],
      [' AMERICA/NEW_YORK ', 'America/New_York'],
      ['US/Eastern', 'America/New_York'],
      ['Asia/Calcutta', 'Asia/Kolkata'],
      ['etc/utc', 'UTC'],
    ];
    for (const [given, stored] of cases) {
      const { id } = await createAgent(app.storage, {
        now: app.now(),
        accountId: tenant.accountId,
        name: 'Zone',
        timezone: given,
      });
      expect(await zoneOf(id), given).toBe(stored);
    }
  });

  it('an update stores the canonical name, and the same zone spelled otherwise changes nothing', async () => {
    const { id } = await createAgent(app.storage, {
      now: app.now(),
      accountId: tenant.accountId,
      name: 'Zone',
      timezone: 'UTC',
    });
    const changed = await updateAgent(app.storage, id, { now: app.now(), timezone: 'europe/kiev' }, OPERATOR);
    expect(changed.changed).toEqual(['timezone']);
    expect(await zoneOf(id)).toBe('Europe/Kyiv');
    expect((await updateAgent(app.storage, id, { now: app.now(), timezone: 'EUROPE/KYIV' }, OPERATOR)).changed).toEqual(
      [],
    );
  });

  it('an unknown name or an offset is refused', async () => {
    for (const timezone of ['Mars/Olympus_Mons', '+05:00', '']) {
      const made = createAgent(app.storage, { now: app.now(), accountId: tenant.accountId, name: 'Zone', timezone });
      await expect(made, timezone).rejects.toThrow(AdminError);
    }
  });

  it('callctl agent create and update store the canonical name', async () => {
    const created = await callctl(databaseUrl, [
      'agent',
      'create',
      '--account',
      tenant.accountId,
      '--name',
      'Typed zone',
      '--timezone',
      'america/new_york',
      '--json',
    ]);
    expect(created.stderr).toBe('');
    const { id } = created.json<{ id: string }>();
    expect(await zoneOf(id)).toBe('America/New_York');
    const updated = await callctl(databaseUrl, ['agent', 'update', id, '--timezone', 'asia/calcutta', '--json']);
    expect(updated.json<{ agent: { timezone: string } }>().agent.timezone).toBe('Asia/Kolkata');
    expect(await zoneOf(id)).toBe('Asia/Kolkata');
  });
});

describe('the migration of the agents stored before', () => {
  const sql = readFileSync(MIGRATION, 'utf8');

  it('maps every name of the table, in lower case, to what canonicalTimeZone gives', () => {
    const pairs = new Map([...sql.matchAll(/\('([^']+)', '([^']+)'\)/g)].map((m) => [m[1]!, m[2]!]));
    for (const name of Object.keys(getAllTimezones({ deprecated: true })))
      expect(pairs.get(name.toLowerCase()) ?? null, name).toBe(canonicalTimeZone(name));
  });

  it('rewrites the rows stored under another spelling, and leaves a name that is no zone', async () => {
    const { accountId } = tenant;
    const stored = ['america/new_york', 'US/Eastern', ' Asia/Calcutta ', 'Europe/London', 'Not/AZone', 'ETC/UTC'];
    const ids: string[] = [];
    for (const timezone of stored) {
      const { id } = await createAgent(app.storage, { now: app.now(), accountId, name: 'Old row' });
      // As a row written before: the zone as it was typed.
      await forceAgent(prismaOf(app), id, { timezone });
      ids.push(id);
    }
    await prismaOf(app).$executeRawUnsafe(sql);
    const after = await Promise.all(ids.map(zoneOf));
    expect(after).toEqual([
      'America/New_York',
      'America/New_York',
      'Asia/Kolkata',
      'Europe/London',
      'Not/AZone',
      'UTC',
    ]);
  });
});
