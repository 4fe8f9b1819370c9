// With no DATABASE_URL the server runs its own PostgreSQL under DATA_DIR: it reuses it, survives a SIGKILL of the
// server, stops it on a graceful exit, and works as root and as an ordinary user.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { httpGet, httpsRequest, startServer } from '../helpers/server-process.js';

function postgresRunningOn(dataDir: string): boolean {
  try {
    return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .some((l) => l.includes(`-D ${dataDir}/pg`));
  } catch {
    return false;
  }
}

/** A scenario that fails after the SIGKILL leaves the server's PostgreSQL running: stop it (fast shutdown). */
async function stopPostgresIn(dataDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  await waitFor(
    () => postgresRunningOn(dataDir),
    (running) => !running,
    30_000,
  ).catch(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  });
}

async function scenario(dataDir: string, ids: { uid?: number; gid?: number } = {}) {
  onTestFinished(() => stopPostgresIn(dataDir));
  const first = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '' }, ids);
  expect((await httpGet(first.internalPort, '/health/ready')).status).toBe(200);
  expect(first.output()).toContain('started embedded PostgreSQL');

  // SIGKILL: the server dies at once; its PostgreSQL outlives it and the next start adopts it.
  expect(await first.stop('SIGKILL')).toBe('SIGKILL');
  expect(postgresRunningOn(dataDir)).toBe(true);
  const second = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '' }, ids);
  expect(second.output()).toContain('joined embedded PostgreSQL');
  expect((await httpsRequest(second.port, '/nope')).status).toBe(404);
  expect((await httpGet(second.internalPort, '/health/ready')).status).toBe(200);

  // A graceful stop takes the adopted PostgreSQL down too; the next start reuses the same data.
  expect(await second.stop('SIGTERM')).toBe(0);
  expect(postgresRunningOn(dataDir)).toBe(false);
  const third = await startServer({ DATA_DIR: dataDir, DATABASE_URL: '' }, ids);
  expect(third.output()).not.toContain('initialising embedded PostgreSQL');
  expect((await httpGet(third.internalPort, '/health/ready')).status).toBe(200);
  expect(await third.stop('SIGTERM')).toBe(0);
  expect(postgresRunningOn(dataDir)).toBe(false);
}

describe('embedded PostgreSQL', () => {
  it(`starts, survives SIGKILL of the server and stops with it (as ${process.getuid?.() === 0 ? 'root' : 'this user'})`, async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-embedded-'));
    await scenario(dataDir);
  }, 120_000);

  it.skipIf(process.getuid?.() !== 0)(
    'works for an ordinary user too (uid 65534)',
    async () => {
      const base = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-embedded-user-'));
      await fs.chmod(base, 0o777);
      const dataDir = path.join(base, 'data');
      await fs.mkdir(dataDir);
      await fs.chown(dataDir, 65534, 65534);
      await scenario(dataDir, { uid: 65534, gid: 65534 });
    },
    120_000,
  );
});
