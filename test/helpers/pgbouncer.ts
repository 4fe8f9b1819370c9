// PgBouncer in transaction mode (pool_mode=transaction) with two server connections in front of a test database:
// fewer than the service's pools, so consecutive statements of one client land on different server connections.
// Needs the `pgbouncer` binary (Debian's package; .ci/run installs it); under CI=true its absence is an error.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/storage/free-port.js';
import { spawnChild, stopChild } from './child-processes.js';

export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => fs.existsSync(p));
if (!PGBOUNCER && process.env.CI === 'true')
  throw new Error('pgbouncer is not installed (apt-get install pgbouncer); CI must run this test');

/** Starts PgBouncer in front of `url` (database `name`) and returns its URL (without ?pgbouncer=true). */
export async function transactionPooler(url: string, name: string): Promise<string> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed');
  const target = new URL(url);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oct-pgbouncer-'));
  fs.chmodSync(dir, 0o777);
  const password = target.password ? ` password=${decodeURIComponent(target.password)}` : '';
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${name} = host=${target.hostname} port=${target.port || 5432} dbname=${name} user=${decodeURIComponent(target.username)}${password}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      'default_pool_size = 2',
      'max_client_conn = 100',
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: -u switches to an unprivileged user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) spawnSync('chown', ['-R', 'nobody', dir]);
  const bouncer = spawnChild(PGBOUNCER, [...(asRoot ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) {
      const pooled = new URL(url);
      pooled.host = `127.0.0.1:${port}`;
      return pooled.toString();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await stopChild(bouncer, 'SIGKILL');
  const log = path.join(dir, 'pgbouncer.log');
  throw new Error(
    `pgbouncer did not start: ${fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-2000) : 'no log'}`,
  );
}
