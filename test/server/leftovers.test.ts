// Nothing a test starts outlives it: a server that is not ready in time is killed with its start, and a child's own
// children stop with it (test/helpers/child-processes.ts). Processes are found by an environment marker that every
// descendant inherits, as .ci/run finds what a whole run left behind.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { spawnChild, stopChild } from '../helpers/child-processes.js';
import { freshDatabase } from '../helpers/database.js';
import { startServer } from '../helpers/server-process.js';
import { waitFor } from '../helpers/wait.js';

/** The pids of running processes whose environment holds OCT_LEFTOVER_PROBE=<marker>. */
function processesMarked(marker: string): number[] {
  const wanted = `OCT_LEFTOVER_PROBE=${marker}`;
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(wanted) ? [Number(pid)] : [];
      } catch {
        return [];
      }
    });
}

describe('test processes', () => {
  it('a server that does not become ready in time is killed, not left running', async () => {
    const marker = randomUUID();
    // A budget too small to start in: the server is still starting when the helper gives up, the case that leaked.
    const { url } = await freshDatabase({ empty: true });
    await expect(
      startServer({ DATABASE_URL: url, OCT_LEFTOVER_PROBE: marker }, { readyTimeoutMs: 50 }),
    ).rejects.toThrow(/did not start in 50 ms/);
    expect(processesMarked(marker)).toEqual([]);
  });

  it('a child and its own children run in a group that stops as one', async () => {
    const marker = randomUUID();
    // A shell that starts a grandchild and waits: stopping by group must take both.
    const child = spawnChild('/bin/sh', ['-c', 'sleep 300 & wait'], {
      env: { ...process.env, OCT_LEFTOVER_PROBE: marker },
      stdio: 'ignore',
    });
    await waitFor(
      () => processesMarked(marker).length,
      (n) => n === 2,
      10_000,
    );
    expect(await stopChild(child, 'SIGTERM')).toBe('SIGTERM');
    await waitFor(
      () => processesMarked(marker),
      (pids) => pids.length === 0,
      10_000,
    );
  });
});
