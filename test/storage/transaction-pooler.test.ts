// Behind a transaction-pooling proxy (PgBouncer, pool_mode=transaction, fewer server connections than the service's
// pool): with `?pgbouncer=true` every trigger, with or without Idempotency-Key, is one autocommitted statement of
// unnamed statements and works; without it, named statements prepared on one server connection are missing on the
// next (the check can fail). Needs the `pgbouncer` binary (Debian's package; .ci/run installs it).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/free-port.js';
import { buildTestApp, closeTestApp } from '../helpers/app.js';
import { freshDatabase } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => fs.existsSync(p));
if (!PGBOUNCER && process.env.CI === 'true') throw new Error('pgbouncer is not installed (apt-get install pgbouncer); CI must run this test');

let bouncer: ChildProcess | undefined;
let directUrl: string;
let pooledUrl: string;

beforeAll(async () => {
  if (!PGBOUNCER) return;
  const { url, name } = await freshDatabase();
  directUrl = url;
  const target = new URL(url);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oct-pgbouncer-'));
  fs.chmodSync(dir, 0o777);
  const password = target.password ? ` password=${decodeURIComponent(target.password)}` : '';
  fs.writeFileSync(path.join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `${name} = host=${target.hostname} port=${target.port || 5432} dbname=${name} user=${decodeURIComponent(target.username)}${password}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1', `listen_port = ${port}`, 'unix_socket_dir =', 'auth_type = any', 'pool_mode = transaction',
    // Fewer server connections than the service's pools: consecutive statements of one client land on different ones.
    'default_pool_size = 2', 'max_client_conn = 100', 'ignore_startup_parameters = extra_float_digits,options',
    `logfile = ${path.join(dir, 'pgbouncer.log')}`, `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
  ].join('\n'));
  // PgBouncer refuses to run as root: -u switches to an unprivileged user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) spawnSync('chown', ['-R', 'nobody', dir]);
  bouncer = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')], { stdio: 'ignore', detached: true });
  const pooled = new URL(url);
  pooled.host = `127.0.0.1:${port}`;
  pooledUrl = pooled.toString();
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('pgbouncer did not start');
});

afterAll(() => {
  if (bouncer?.pid) process.kill(-bouncer.pid, 'SIGTERM');
});

describe.skipIf(!PGBOUNCER)('behind a transaction-pooling proxy', () => {
  it('without it, named statements break behind the pooler (so the test below proves something; it runs first: the switch is per process)', async () => {
    const { app } = await buildTestApp({ databaseUrl: pooledUrl, env: { RATE_LIMIT_PER_MINUTE: '10000' } });
    const direct = await buildTestApp({ databaseUrl: directUrl });
    const tenant = await createTenant(direct.app.prisma);
    const statuses = (await Promise.all(Array.from({ length: 40 }, () => trigger(app, tenant.key)))).map((r) => r.statusCode);
    expect(statuses.some((s) => s >= 500)).toBe(true);
    await closeTestApp(app);
  });

  it('with ?pgbouncer=true, concurrent triggers with and without Idempotency-Key are all accepted, each call once', async () => {
    const url = new URL(pooledUrl);
    url.searchParams.set('pgbouncer', 'true');
    const { app } = await buildTestApp({ databaseUrl: url.toString(), env: { RATE_LIMIT_PER_MINUTE: '10000' } });
    const tenant = await createTenant(app.prisma);
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      trigger(app, tenant.key, { phone_number: '+14155552671', metadata: { n: i } }, i % 2 ? { 'idempotency-key': `key-${i}` } : {})));
    expect(responses.map((r) => r.statusCode)).toEqual(responses.map(() => 200));
    const replay = await trigger(app, tenant.key, { phone_number: '+14155552671', metadata: { n: 1 } }, { 'idempotency-key': 'key-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().call_id).toBe(responses[1]!.json().call_id);
    expect(await app.prisma.call.count({ where: { accountId: tenant.accountId } })).toBe(40);
    await closeTestApp(app);
  });
});
