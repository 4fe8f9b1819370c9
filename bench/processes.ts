// Child processes of the bench: the service (built, as `npm start` runs it), the baseline server, and one load
// generator per measurement. Each is its own Node process; their output goes to log files, not through us.
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { LoadResult, LoadSpec } from './load.js';
import { freePort, freePorts } from '../src/storage/free-port.js';

const BENCH_DIR = path.dirname(new URL(import.meta.url).pathname);
export const ROOT = path.dirname(BENCH_DIR);

export interface Child {
  process: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
}

async function waitForHttp(url: string, child: ChildProcess, logFile: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited (${child.exitCode}); see ${logFile}`);
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms; see ${logFile}`);
}

function spawnLogged(args: string[], env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  return child;
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited(child);
  clearTimeout(timer);
}

/**
 * Diagnostic node flags for a service, from the environment: BENCH_PROFILE=<dir> writes a CPU profile when it stops
 * (`<name>.cpuprofile` when named), BENCH_NODE_FLAGS adds node flags (e.g. --trace-gc). A run with either is a
 * diagnosis, not a committed run (`DIAGNOSED`).
 */
export function diagnosticNodeFlags(name?: string): string[] {
  const { BENCH_PROFILE, BENCH_NODE_FLAGS } = process.env;
  return [
    ...(BENCH_PROFILE
      ? ['--cpu-prof', `--cpu-prof-dir=${BENCH_PROFILE}`, ...(name ? [`--cpu-prof-name=${name}.cpuprofile`] : [])]
      : []),
    ...(BENCH_NODE_FLAGS ? BENCH_NODE_FLAGS.split(' ').filter(Boolean) : []),
  ];
}

export const DIAGNOSED = Boolean(process.env.BENCH_PROFILE || process.env.BENCH_NODE_FLAGS);

export interface ServiceOptions {
  env: Record<string, string>;
  logFile: string;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeFlags?: string[];
}

/** `node --enable-source-maps dist/src/server.js`, plain HTTP (TLS_MODE=proxy); ready when /health/ready says so. */
export async function startService({
  env,
  logFile,
  nodeFlags = [],
}: ServiceOptions): Promise<Child & { internalPort: number }> {
  const [port, internalPort] = (await freePorts(2)) as [number, number];
  // BENCH_SERVICE_ROOT: another built checkout (e.g. the last commit) to compare before and after a change.
  const server = path.join(process.env.BENCH_SERVICE_ROOT || ROOT, 'dist/src/server.js');
  const child = spawnLogged(
    [...nodeFlags, '--enable-source-maps', server],
    {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      INTERNAL_PORT: String(internalPort),
      TLS_MODE: 'proxy',
      ...env,
    },
    logFile,
  );
  await waitForHttp(`http://127.0.0.1:${internalPort}/health/ready`, child, logFile);
  return { process: child, port, internalPort, stop: () => stopChild(child) };
}

/** The baseline: bench/baseline-server.ts under the same Node (tsx only loads it; the hot path is plain JS). */
export async function startBaseline(databaseUrl: string, logFile: string): Promise<Child> {
  const port = await freePort();
  const child = spawnLogged(
    ['--import', 'tsx', path.join(BENCH_DIR, 'baseline-server.ts')],
    {
      ...process.env,
      BASELINE_DATABASE_URL: databaseUrl,
      PORT: String(port),
    },
    logFile,
  );
  await waitForHttp(`http://127.0.0.1:${port}/health`, child, logFile);
  return { process: child, port, stop: () => stopChild(child) };
}

/** Runs one autocannon job in a fresh child process and returns its result. */
export async function runLoadProcess(spec: LoadSpec): Promise<LoadResult> {
  const child = fork(path.join(BENCH_DIR, 'load.ts'), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const done = exited(child);
  try {
    const reply = await new Promise<{ ok: boolean; result?: LoadResult; error?: string }>((resolve, reject) => {
      child.once('message', (message) => resolve(message as { ok: boolean; result?: LoadResult; error?: string }));
      child.once('exit', (code) => reject(new Error(`load generator exited (${code}) without a result`)));
      child.send(spec);
    });
    if (!reply.ok || !reply.result) throw new Error(`load generator failed: ${reply.error}`);
    return reply.result;
  } finally {
    await done;
  }
}

/** The measured service's checkout (BENCH_SERVICE_ROOT or this one) as `git describe` says it; null outside git. */
export function serviceCommit(): string | null {
  const git = spawnSync('git', ['describe', '--always', '--dirty'], {
    cwd: process.env.BENCH_SERVICE_ROOT || ROOT,
    encoding: 'utf8',
  });
  return git.status === 0 ? git.stdout.trim() : null;
}
