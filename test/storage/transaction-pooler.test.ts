// Behind a transaction-pooling proxy (PgBouncer, pool_mode=transaction, fewer server connections than the service's
// pool): with `?pgbouncer=true` every trigger, with or without Idempotency-Key, is one autocommitted statement of
// unnamed statements and works; without it, named statements prepared on one server connection are missing on the
// next (the check can fail). Needs the `pgbouncer` binary (Debian's package; .ci/run installs it).
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, closeTestApp, prismaOf } from '../helpers/app.js';
import { freshDatabase } from '../helpers/database.js';
import { PGBOUNCER, transactionPooler } from '../helpers/pgbouncer.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

let directUrl: string;
let pooledUrl: string;

beforeAll(async () => {
  if (!PGBOUNCER) return;
  const { url, name } = await freshDatabase();
  directUrl = url;
  pooledUrl = await transactionPooler(url, name);
});

describe.skipIf(!PGBOUNCER)('behind a transaction-pooling proxy', () => {
  it('without it, named statements break behind the pooler (so the test below proves something; it runs first: the switch is per process)', async () => {
    const { app } = await buildTestApp({ databaseUrl: pooledUrl, env: { RATE_LIMIT_PER_MINUTE: '10000' } });
    const direct = await buildTestApp({ databaseUrl: directUrl });
    const tenant = await createTenant(direct.app.storage);
    const statuses = (await Promise.all(Array.from({ length: 40 }, () => trigger(app, tenant.key)))).map(
      (r) => r.statusCode,
    );
    expect(statuses.some((s) => s >= 500)).toBe(true);
    await closeTestApp(app);
  });

  it('with ?pgbouncer=true, concurrent triggers with and without Idempotency-Key are all accepted, each call once', async () => {
    const url = new URL(pooledUrl);
    url.searchParams.set('pgbouncer', 'true');
    const { app } = await buildTestApp({ databaseUrl: url.toString(), env: { RATE_LIMIT_PER_MINUTE: '10000' } });
    const tenant = await createTenant(app.storage);
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        trigger(
          app,
          tenant.key,
          { phone_number: '+14155552671', metadata: { n: i } },
          i % 2 ? { 'idempotency-key': `key-${i}` } : {},
        ),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(responses.map(() => 200));
    const replay = await trigger(
      app,
      tenant.key,
      { phone_number: '+14155552671', metadata: { n: 1 } },
      { 'idempotency-key': 'key-1' },
    );
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(callIdOf(replay)).toBe(callIdOf(responses[1]!));
    expect(await prismaOf(app).call.count({ where: { accountId: tenant.accountId } })).toBe(40);
    await closeTestApp(app);
  });
});
