// The do-not-call import at its maximum size, three tenants at once, while a fourth triggers calls: the event loop is
// never held 100 ms by the process's own work (test/dashboard/loop-watch.ts), every trigger is accepted, no import
// answers 5xx (two run, a third beyond the per-process limit is refused with 429 and audited, or runs once a slot
// frees), every one that ran imported its whole file, and memory does not grow with the files.
import { beforeAll, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { DASHBOARD_IMPORT_MAX_BYTES } from '../../src/domain/do-not-call.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from '../dashboard/helpers.js';
import { LOOP_STALL_LIMIT_MS, numbersFile, watchLoop } from '../dashboard/loop-watch.js';
import { UNLIMITED } from './helpers.js';

let app: App;
let caller: Tenant;
const importers: { tenant: Tenant; visitor: Visitor }[] = [];

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: { ...DASHBOARD_ENV, ...UNLIMITED } }));
  caller = await createTenant(app.storage);
  for (let i = 0; i < 3; i++) {
    const tenant = await createTenant(app.storage);
    await createUserWithPassword(app.storage, tenant.accountId, `big${i}@dnc.example`);
    const visitor = new Visitor(app);
    expect((await visitor.signIn(`big${i}@dnc.example`)).status).toBe(303);
    await visitor.get('/dashboard/do-not-call');
    importers.push({ tenant, visitor });
  }
});

it('imports three 2 MiB files at once without holding the loop, refusing a trigger or growing memory', async () => {
  const { content, rows } = numbersFile(DASHBOARD_IMPORT_MAX_BYTES);
  let peak = process.memoryUsage().rss;
  const baseline = peak;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const watched = await watchLoop(app, caller.key, () =>
    Promise.all(
      importers.map(({ visitor }) =>
        visitor.upload('/dashboard/do-not-call/import', { field: 'file', name: 'big.csv', content }),
      ),
    ),
  ).finally(() => clearInterval(sampler));

  expect(watched.triggers.length).toBeGreaterThan(0);
  expect(watched.refusals).toEqual([]);
  expect(watched.heldMs, `held ${watched.heldMs} ms (wall-clock ${watched.maxStallMs} ms)`).toBeLessThan(
    LOOP_STALL_LIMIT_MS,
  );
  const statuses = watched.result.map((r) => r.status);
  expect(statuses.filter((s) => s !== 303 && s !== 429)).toEqual([]);
  expect(statuses.filter((s) => s === 303).length).toBeGreaterThanOrEqual(2);
  for (const [i, { tenant }] of importers.entries()) {
    const listed = await prismaOf(app).doNotCallEntry.count({ where: { accountId: tenant.accountId } });
    const refused = await prismaOf(app).auditEntry.count({
      where: { accountId: tenant.accountId, action: 'do_not_call_import_refused' },
    });
    if (statuses[i] === 303) expect(listed).toBe(rows);
    else expect([listed, refused]).toEqual([0, 1]);
  }
  expect(await prismaOf(app).doNotCallImportRow.count()).toBe(0);
  // Three files of 2 MiB: the process's memory grew by far less than one file's rows as objects would take.
  expect((peak - baseline) / 1024 / 1024).toBeLessThan(300);
});
