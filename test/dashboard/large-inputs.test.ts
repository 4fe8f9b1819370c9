// Every request that takes a large input, at its maximum size, while another tenant triggers calls: the do-not-call
// import of a 2 MiB file (valid rows, and bad rows refused), the export of the list it made, and the dashboard's forms
// at the body limit. None may hold the event loop beyond LOOP_STALL_LIMIT_MS (loop-watch.ts says how that is measured
// on a shared machine), and every trigger sent meanwhile is accepted: one tenant's large input never slows the others.
import { beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT, type App } from '../../src/app.js';
import { DASHBOARD_IMPORT_MAX_BYTES } from '../../src/domain/do-not-call.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { UNLIMITED } from '../reliability/helpers.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';
import { LOOP_STALL_LIMIT_MS, numbersFile, watchLoop, type Watched } from './loop-watch.js';

let app: App;
let owner: Tenant;
let other: Tenant;
let visitor: Visitor;
const OWN = '/dashboard/do-not-call';

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: { ...DASHBOARD_ENV, ...UNLIMITED } }));
  owner = await createTenant(app.storage);
  other = await createTenant(app.storage);
  await createUserWithPassword(app.storage, owner.accountId, 'big@dnc.example');
  visitor = new Visitor(app);
  expect((await visitor.signIn('big@dnc.example')).status).toBe(303);
});

function expectUnhurried(watched: Watched<unknown>) {
  expect(watched.triggers.length).toBeGreaterThan(0);
  expect(watched.refusals).toEqual([]);
  expect(watched.heldMs, `held ${watched.heldMs} ms (wall-clock stall ${watched.maxStallMs} ms)`).toBeLessThan(
    LOOP_STALL_LIMIT_MS,
  );
}

describe('one tenant’s large input, another tenant’s triggers', () => {
  it('imports a 2 MiB file of valid numbers', { timeout: 300_000 }, async () => {
    const { content, rows } = numbersFile(DASHBOARD_IMPORT_MAX_BYTES);
    expect(content.length).toBeLessThanOrEqual(DASHBOARD_IMPORT_MAX_BYTES);
    await visitor.get(OWN);
    const watched = await watchLoop(app, other.key, () =>
      visitor.upload(`${OWN}/import`, { field: 'file', name: 'big.csv', content }),
    );
    expectUnhurried(watched);
    expect(watched.result.status).toBe(303);
    expect(await prismaOf(app).doNotCallEntry.count({ where: { accountId: owner.accountId } })).toBe(rows);
    expect(await prismaOf(app).doNotCallImportRow.count()).toBe(0);
  });

  it('refuses a 2 MiB file of bad rows', { timeout: 300_000 }, async () => {
    const { content } = numbersFile(DASHBOARD_IMPORT_MAX_BYTES, true);
    await visitor.get(OWN);
    const watched = await watchLoop(app, other.key, () =>
      visitor.upload(`${OWN}/import`, { field: 'file', name: 'bad.csv', content }),
    );
    expectUnhurried(watched);
    expect(watched.result.status).toBe(400);
    expect(watched.result.body).toContain('Nothing was imported');
  });

  it('exports the list the import made', { timeout: 300_000 }, async () => {
    const count = await prismaOf(app).doNotCallEntry.count({ where: { accountId: owner.accountId } });
    expect(count).toBeGreaterThan(100_000);
    const watched = await watchLoop(app, other.key, () => visitor.download(`${OWN}/export.csv`));
    expectUnhurried(watched);
    expect(watched.result.status).toBe(200);
    expect(watched.result.lines).toBe(count + 1);
  });

  it('takes the dashboard’s forms at the body limit', { timeout: 300_000 }, async () => {
    await visitor.get(OWN);
    const csrf = visitor.lastCsrf!;
    const filler = 'x'.repeat(BODY_LIMIT - 200);
    const watched = await watchLoop(app, other.key, async () => {
      const statuses: number[] = [];
      for (const action of ['/dashboard/agents', '/dashboard/calls/cancel', `${OWN}/add`, '/dashboard/users/invite'])
        for (let i = 0; i < 5; i++)
          statuses.push(
            (await visitor.request('POST', action, { _csrf: csrf, name: filler, reason: filler.slice(0, 100) })).status,
          );
      return statuses;
    });
    // Refused (too long) or answered, never a 5xx.
    expect(watched.result.filter((status) => status >= 500)).toEqual([]);
    expectUnhurried(watched);
  });
});
