// PgBouncer in transaction mode (pool_mode=transaction) with two server connections in front of a test database:
// fewer than the service's pools, so consecutive statements of one client land on different server connections.
// Needs the `pgbouncer` binary (Debian's package; .ci/run installs it); under CI=true its absence is an error.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { freePort } from '../../src/free-port.js';

export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => fs.existsSync(p));
if (!PGBOUNCER && process.env.CI === 'true') throw new Error('pgbouncer is not installed (apt-get install pgbouncer); CI must run this test');

const started: ChildProcess[] = [];
afterAll(() => {
  for (const bouncer of started.splice(0)) if (bouncer.pid) process.kill(-bouncer.pid, 'SIGTERM');
});

/** Starts PgBouncer in front of `url` (database `name`) and returns its URL (without ?pgbouncer=true). */
export async function transactionPooler(url: string, name: string): Promise<string> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed');
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
    'default_pool_size = 2', 'max_client_conn = 100', 'ignore_startup_parameters = extra_float_digits,options',
    `logfile = ${path.join(dir, 'pgbouncer.log')}`, `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
  ].join('\n'));
  // PgBouncer refuses to run as root: -u switches to an unprivileged user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) spawnSync('chown', ['-R', 'nobody', dir]);
  started.push(spawn(PGBOUNCER, [...(asRoot ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')], { stdio: 'ignore', detached: true }));
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (ok) {
      const pooled = new URL(url);
      pooled.host = `127.0.0.1:${port}`;
      return pooled.toString();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('pgbouncer did not start');
}
