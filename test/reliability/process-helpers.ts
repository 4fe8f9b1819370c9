// Fault injection for the reliability suite: a PostgreSQL and a Redis of our own that a scenario can stop, freeze and
// start again on the same port, and a keep-alive HTTPS client that times each request.
import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import https from 'node:https';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { startEmbeddedPostgres } from '../../src/storage/embedded-postgres.js';
import { freePort } from '../../src/storage/free-port.js';
import { spawnChild, stopChild } from '../helpers/child-processes.js';

const run = promisify(execFile);
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a truthy value; throws with `what` after `timeoutMs`. */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T> | T,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<Exclude<T, false | null | undefined>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await Promise.resolve()
      .then(probe)
      .catch(() => undefined);
    if (value) return value as Exclude<T, false | null | undefined>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL we may stop. The shared one on 5432 serves every other test and must never go down.

export interface OwnPostgres {
  /** The service database (outbound_call_trigger) on our server. */
  url: string;
  port: number;
  /** pg_ctl stop: `fast` disconnects every client (a clean outage), `immediate` is a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port: clients configured with `url` reconnect by themselves. */
  start(): Promise<void>;
  /**
   * SIGSTOP to the postmaster and every backend: connections stay open and nothing answers, new connections are
   * accepted by the kernel and never greeted (a hung server or a network partition, not a refusal).
   */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  /** Stops it and removes its files. */
  close(): Promise<void>;
  /** The tail of PostgreSQL's own log (for a failing scenario's report). */
  log(): Promise<string>;
}

async function pgCtlPath(): Promise<string> {
  // The embedded binaries (the data directory's major version), resolved the way src/storage/embedded-postgres.ts does.
  const require = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const entry = require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  return ((await import(entry)) as { pg_ctl: string }).pg_ctl;
}

/** As root, PostgreSQL runs as the `postgres` user (startEmbeddedPostgres creates it): so must pg_ctl. */
async function postgresIds(): Promise<{ uid?: number; gid?: number }> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  return {
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  };
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-rel-pg-'));
  const embedded = await startEmbeddedPostgres(base, 'cli');
  const dataDir = path.join(base, 'pg');
  // startEmbeddedPostgres picks a free port each time it starts a server: restart with pg_ctl on the one it chose
  // (postmaster.pid's fourth line), so the URL the service was started with stays right.
  const port = Number((await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[3]);
  const pgCtl = await pgCtlPath();
  const ids = await postgresIds();
  const env = { ...process.env, LC_ALL: 'C' };
  let running = true;
  const clusterPids = async () => {
    const postmaster = Number((await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const children = (await run('ps', ['-o', 'pid=', '--ppid', String(postmaster)]).catch(() => ({ stdout: '' })))
      .stdout;
    return [
      postmaster,
      ...children
        .split('\n')
        .map((l) => Number(l.trim()))
        .filter((pid) => pid > 0),
    ];
  };
  const self: OwnPostgres = {
    url: embedded.url,
    port,
    async stop(mode = 'fast') {
      await run(pgCtl, ['stop', '-m', mode, '-w', '-D', dataDir], { ...ids, env });
      running = false;
    },
    async start() {
      await run(
        pgCtl,
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
          `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`,
        ],
        { ...ids, env },
      );
      running = true;
    },
    async log() {
      const text = await fs.readFile(path.join(dataDir, 'server.log'), 'utf8').catch((error: Error) => error.message);
      return text.slice(-4000);
    },
    async freeze() {
      for (const pid of await clusterPids()) process.kill(pid, 'SIGSTOP');
    },
    async thaw() {
      for (const pid of await clusterPids()) process.kill(pid, 'SIGCONT');
    },
    async close() {
      await self.thaw().catch(() => undefined);
      if (running) await self.stop('fast').catch(() => undefined);
      await fs.rm(base, { recursive: true, force: true });
    },
  };
  return self;
}

// ---------------------------------------------------------------------------------------------------------------
// Redis we may kill. The shared one on 6379 serves every other test and must never go down.

export interface OwnRedis {
  url: string;
  port: number;
  /** SIGKILL: connections reset, new ones refused. */
  kill(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing answers (a hung server). */
  freeze(): void;
  thaw(): void;
  /** Starts a new, empty server on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.write('PING\r\n');
    });
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const self: OwnRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      // No persistence: a restarted Redis has forgotten every counter, as a replacement instance would.
      const started = spawnChild(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      child = started;
      await waitUntil(`redis-server on port ${port}`, () => accepts(port), 10_000, 20).catch(async (error: unknown) => {
        await stopChild(started, 'SIGKILL');
        throw error;
      });
    },
    async kill() {
      if (child) await stopChild(child, 'SIGKILL');
      child = null;
    },
    freeze() {
      child?.kill('SIGSTOP');
    },
    thaw() {
      child?.kill('SIGCONT');
    },
    async close() {
      if (!child) return;
      child.kill('SIGCONT');
      await stopChild(child, 'SIGKILL');
      child = null;
    },
  };
  await self.start();
  return self;
}

// ---------------------------------------------------------------------------------------------------------------
// HTTPS to a server process: keep-alive (as a CRM posting triggers would), self-signed certificate accepted.

export interface Timed {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Wall time from sending to the end of the response. */
  ms: number;
}

export function keepAliveAgent(maxSockets = 50): https.Agent {
  return new https.Agent({ keepAlive: true, maxSockets, rejectUnauthorized: false });
}

/** One request; rejects on a network error (connection refused or reset) or after `timeoutMs`. */
export function timedRequest(
  agent: https.Agent,
  port: number,
  pathname: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: pathname,
        method: init.method ?? 'GET',
        headers: init.headers,
        agent,
        timeout: init.timeoutMs ?? 15_000,
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, ms: performance.now() - started }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${init.timeoutMs ?? 15_000} ms`)));
    req.on('error', reject);
    req.end(init.body);
  });
}

/** POST /api/v1/calls/trigger with a key and a JSON body. */
export function triggerOver(
  agent: https.Agent,
  port: number,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Timed> {
  return timedRequest(agent, port, '/api/v1/calls/trigger', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** GET on the internal (plain HTTP) listener, timed; never throws (status 0 on a network error). */
export async function internalGet(
  port: number,
  pathname: string,
): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  try {
    const res = await fetch(`http://127.0.0.1:${port}${pathname}`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: await res.text(), ms: performance.now() - started };
  } catch (error) {
    return { status: 0, body: (error as Error).message, ms: performance.now() - started };
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
