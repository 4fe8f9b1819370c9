// The agent form's page (issue 24, point 4): window rows as day boxes and time inputs, added and removed by buttons
// that show the form again with what was typed and save nothing; the time-zone picker with the canonical IANA names
// only, by region; a new agent's zone chosen by a self-hosted script (UTC without it); an existing agent's zone kept,
// shown by its canonical name when it was stored under a deprecated one.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import type { App } from '../../src/app.js';
import { canonicalZone, ZONE_REGIONS } from '../../src/domain/time-zones.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

let app: App;
let tenant: Tenant;
let owner: Visitor;

/** What the new-agent page sends: name, fields, the rows' boxes and times, and the button pressed. */
function form(rows: { days: string[]; from: string; to: string }[], action?: string): [string, string][] {
  const pairs: [string, string][] = [
    ['name', 'Rows agent'],
    ['phone', '+14155550150'],
    ['timezone', 'Europe/Kyiv'],
    ['policy', 'queue'],
  ];
  rows.forEach((row, i) => {
    for (const day of row.days) pairs.push(['window_day', `${i}:${day}`]);
    pairs.push(['window_from', row.from], ['window_to', row.to]);
  });
  if (action) pairs.push(['action', action]);
  return pairs;
}

async function post(path: string, pairs: [string, string][]) {
  expect((await owner.get(path === '/dashboard/agents' ? '/dashboard/agents/new' : path)).status).toBe(200);
  return owner.request('POST', path, [['_csrf', owner.lastCsrf ?? ''], ...pairs] as unknown as Record<string, string>);
}

/** The page's window rows: each row's ticked days and its two times. */
function rowsOf(body: string) {
  const rows: { days: string[]; from: string; to: string }[] = [];
  for (const [, block = ''] of body.matchAll(/<fieldset class="window-row"[^>]*>([\s\S]*?)<\/fieldset>/g)) {
    rows.push({
      days: [...block.matchAll(/value="\d+:(\w+)" checked/g)].map((m) => m[1]!),
      from: /name="window_from" value="([^"]*)"/.exec(block)![1]!,
      to: /name="window_to" value="([^"]*)"/.exec(block)![1]!,
    });
  }
  return rows;
}

/** The time-zone select's option values, and its selected one. */
function zonesOf(body: string) {
  const select = /<select id="f-timezone"[\s\S]*?<\/select>/.exec(body)![0];
  const values = [...select.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1]!);
  const selected = /<option value="([^"]+)"[^>]* selected>/.exec(select)?.[1];
  const groups = [...select.matchAll(/<optgroup label="([^"]+)">/g)].map((m) => m[1]!);
  return { select, values, selected, groups };
}

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenant = await createTenant(app.storage);
  await createUserWithPassword(app.storage, tenant.accountId, 'owner@rows.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@rows.example')).status).toBe(303);
});

describe('window rows', () => {
  it('a new agent starts with one empty row: no day ticked, no time, no placeholder', async () => {
    const { body } = await owner.get('/dashboard/agents/new');
    expect(rowsOf(body)).toEqual([{ days: [], from: '', to: '' }]);
    expect(body).toContain('<input type="time" id="f-w0-from" name="window_from" value="">');
    expect(body).toContain('<input type="checkbox" name="window_day" value="0:mon" aria-label="Monday"> Mon</label>');
    const form = /<form method="post" action="\/dashboard\/agents"[\s\S]*?<\/form>/.exec(body)![0];
    expect(form).not.toContain('placeholder=');
    expect(form).not.toMatch(/mon-fri|sat,sun|daily/);
    // Enter in a field presses the first submit button: the hidden Save, not "Remove window 1".
    expect(form.indexOf('value="save" hidden')).toBeLessThan(form.indexOf('value="remove-window-0"'));
  });

  it('"Add a window" shows the form again with what was typed and an empty row, and saves nothing', async () => {
    const agents = await prismaOf(app).agent.count();
    const rows = [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' },
      { days: ['sat'], from: '10:00', to: '' },
    ];
    const res = await post('/dashboard/agents', form(rows, 'add-window'));
    expect(res.status).toBe(200);
    expect(rowsOf(res.body)).toEqual([...rows, { days: [], from: '', to: '' }]);
    // A half-filled row is no problem until saved.
    expect(res.body).not.toContain('class="field-error"');
    expect(res.body).toContain('value="Rows agent"');
    expect(zonesOf(res.body).selected).toBe('Europe/Kyiv');
    expect(await prismaOf(app).agent.count()).toBe(agents);
  });

  it('"Remove" takes that row out (the others keep their boxes and times) and saves nothing, on an edit too', async () => {
    const rows = [
      { days: ['mon'], from: '08:00', to: '12:00' },
      { days: ['tue'], from: '13:00', to: '14:00' },
      { days: ['sat', 'sun'], from: '22:00', to: '02:00' },
    ];
    const res = await post('/dashboard/agents', form(rows, 'remove-window-1'));
    expect(res.status).toBe(200);
    expect(rowsOf(res.body)).toEqual([rows[0], rows[2]]);
    // The boxes are numbered by their new rows.
    expect(res.body).toContain('value="1:sat" checked');

    const stored = await prismaOf(app).agent.findUniqueOrThrow({ where: { id: tenant.agentId } });
    const edit = await post(`/dashboard/agents/${tenant.agentId}`, form([rows[0]!], 'remove-window-0'));
    expect(edit.status).toBe(200);
    expect(rowsOf(edit.body)).toEqual([{ days: [], from: '', to: '' }]);
    expect(await prismaOf(app).agent.findUniqueOrThrow({ where: { id: tenant.agentId } })).toEqual(stored);
    expect(await prismaOf(app).auditEntry.count({ where: { action: 'agent_changed' } })).toBe(0);
  });

  it('saves the rows as windows (an empty row skipped, "to 00:00" until midnight) and shows them again', async () => {
    const rows = [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' },
      { days: [], from: '', to: '' },
      { days: ['sat'], from: '18:00', to: '00:00' },
    ];
    const res = await post('/dashboard/agents', form(rows, 'save'));
    expect(res.status).toBe(303);
    const agent = await prismaOf(app).agent.findFirstOrThrow({ where: { name: 'Rows agent' } });
    expect(agent.callingWindows).toEqual([
      { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
      { days: [6], start: '18:00', end: '24:00' },
    ]);
    expect(agent.timezone).toBe('Europe/Kyiv');
    expect(rowsOf((await owner.get(`/dashboard/agents/${agent.id}`)).body)).toEqual([rows[0], rows[2]]);
  });
});

describe('the time-zone picker', () => {
  it('offers the canonical IANA names only, grouped by region, UTC first', async () => {
    const { values, groups, selected, select } = zonesOf((await owner.get('/dashboard/agents/new')).body);
    for (const deprecated of ['Asia/Calcutta', 'Europe/Kiev', 'America/Godthab', 'US/Eastern', 'Asia/Saigon'])
      expect(values, deprecated).not.toContain(deprecated);
    for (const canonical of ['Asia/Kolkata', 'Europe/Kyiv', 'America/Nuuk', 'America/New_York', 'Asia/Ho_Chi_Minh'])
      expect(values, canonical).toContain(canonical);
    expect(values[0]).toBe('UTC');
    expect(values.filter((v) => v.startsWith('Etc/'))).toEqual([]);
    expect(groups).toEqual([
      'Africa',
      'America',
      'Antarctica',
      'Asia',
      'Atlantic',
      'Australia',
      'Europe',
      'Indian',
      'Pacific',
    ]);
    // Each name once, each a canonical name of the tz database.
    expect(new Set(values).size).toBe(values.length);
    for (const value of values) expect(canonicalZone(value), value).toBe(value);
    expect(values.length).toBe(1 + ZONE_REGIONS.reduce((n, r) => n + r.zones.length, 0));
    // A place's label starts with its city (a select is searched by typing the label's first letters).
    expect(select).toContain(
      '<option value="Asia/Kolkata" data-aliases="Asia/Calcutta">Kolkata (Asia/Kolkata)</option>',
    );
    expect(select).toContain('>New York (America/New_York)</option>');
    // Without script: UTC. The select is marked for the script that picks the browser's zone, which the page loads.
    expect(selected).toBe('UTC');
    expect(select).toMatch(/^<select id="f-timezone" name="timezone" data-browser-zone/);
  });

  it('serves the browser-zone script as a file the CSP allows, loaded on the new agent page only', async () => {
    const script = await app.inject({
      url: '/dashboard/assets/zone-default.js',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.body).toContain('resolvedOptions().timeZone');
    const fresh = (await owner.get('/dashboard/agents/new')).body;
    expect(fresh).toContain('<script src="/dashboard/assets/zone-default.js" defer></script>');
    const existing = (await owner.get(`/dashboard/agents/${tenant.agentId}`)).body;
    expect(existing).not.toContain('zone-default.js');
    expect(existing).not.toContain('data-browser-zone');
  });

  it("keeps an existing agent's zone; one stored under a deprecated name shows its canonical name", async () => {
    const cases = [
      ['America/Chicago', 'America/Chicago'],
      ['Asia/Calcutta', 'Asia/Kolkata'],
      ['Europe/Kiev', 'Europe/Kyiv'],
      ['America/Godthab', 'America/Nuuk'],
      ['Etc/UTC', 'UTC'],
    ] as const;
    for (const [stored, shown] of cases) {
      const { id } = await createAgent(app.storage, {
        accountId: tenant.accountId,
        name: `Zone ${stored}`,
        timezone: stored,
        now: app.now(),
      });
      const page = (await owner.get(`/dashboard/agents/${id}`)).body;
      const { selected, values } = zonesOf(page);
      expect(selected, stored).toBe(shown);
      if (shown !== 'UTC') expect(page, stored).toContain(`The agent&#39;s time zone (${shown})`);
      expect(values, stored).not.toContain(stored === shown ? 'Asia/Calcutta' : stored);
    }
    // A zone the list lacks (a fixed offset) is kept, as the first choice.
    const { id } = await createAgent(app.storage, {
      accountId: tenant.accountId,
      name: 'Offset',
      timezone: 'Etc/GMT+5',
      now: app.now(),
    });
    const body = (await owner.get(`/dashboard/agents/${id}`)).body;
    expect(body).toMatch(/<select id="f-timezone" name="timezone"[^>]*>\s*<option selected>Etc\/GMT\+5<\/option>/);
  });

  it('a zone sent in another spelling (a form sent by hand) is saved by its canonical name', async () => {
    const pairs = form([]).map(([k, v]): [string, string] => (k === 'timezone' ? [k, 'america/new_york'] : [k, v]));
    const created = await post('/dashboard/agents', [...pairs.filter(([k]) => k !== 'name'), ['name', 'Typed zone']]);
    expect(created.status).toBe(303);
    const agent = await prismaOf(app).agent.findFirstOrThrow({ where: { name: 'Typed zone' } });
    expect(agent.timezone).toBe('America/New_York');
    const edited = await post(`/dashboard/agents/${agent.id}`, [
      ...pairs.filter(([k]) => k !== 'name' && k !== 'timezone'),
      ['name', 'Typed zone'],
      ['timezone', ' US/EASTERN '],
    ]);
    expect(edited.status).toBe(303);
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agent.id } })).timezone).toBe(
      'America/New_York',
    );
  });
});
