// Every process a test starts (a server, PgBouncer, a Redis, a receiver) runs in its own process group and is stopped
// by that group on every path: by its test, when the test file ends, when it fails to start, and when the test worker
// exits for any reason. `.ci/run` then fails if anything the suite started is still alive (OCT_TEST_RUN marker).
import { fork, spawn, type ChildProcess, type ForkOptions, type SpawnOptions } from 'node:child_process';
import { atFileEnd } from './file-end.js';

const live = new Set<ChildProcess>();

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already (or the child never became a group leader): nothing left to stop.
  }
}

/** A worker that exits (a crash, a timeout, the end of the run) takes its children with it. */
process.once('exit', () => {
  for (const child of live) signalGroup(child, 'SIGKILL');
});

atFileEnd(async () => {
  await Promise.all([...live].map((child) => stopChild(child, 'SIGKILL')));
});

function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** `spawn` in a process group of its own, stopped with the test file at the latest. */
export function spawnChild(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return track(spawn(command, args, { ...options, detached: true }));
}

/** `fork` (an IPC channel) in a process group of its own, stopped with the test file at the latest. */
export function forkChild(modulePath: string, args: readonly string[], options: ForkOptions = {}): ChildProcess {
  return track(fork(modulePath, args, { ...options, detached: true }));
}

/** Whether the child itself is still running. */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Sends `signal` to the child's whole group and resolves with its exit code (or signal name). A group that outlives
 * `graceMs` (a hang on shutdown) is killed, so a stop always ends.
 */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 20_000,
): Promise<number | string> {
  const exited = new Promise<number | string>((resolve) => {
    if (!isRunning(child)) resolve(child.exitCode ?? child.signalCode ?? -1);
    else child.once('exit', (code, sig) => resolve(code ?? sig ?? -1));
  });
  signalGroup(child, signal);
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
    // What the child started in its group and left behind (a grandchild it did not wait for) goes too.
    signalGroup(child, 'SIGKILL');
  }
}
