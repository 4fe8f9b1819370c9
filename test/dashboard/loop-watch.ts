// Runs a large request while watching what other tenants would feel: how long the event loop was held by this
// process's own work, and another tenant's triggers sent meanwhile, every one of which must be accepted.
//
// The loop's stalls are measured twice. perf_hooks.monitorEventLoopDelay gives the longest wall-clock stall, which on
// a shared machine includes the time the operating system gave the process no CPU at all (an idle process saw 117 ms
// under a load average of 16 on 2 cores): reported, not a bound. The bound is on the CPU time the main thread spent
// within one stall (between two ticks of a 1 ms timer; holdMeter says how it is read): the time its own code kept the loop from
// turning, which is what delays another tenant's request and what a machine's load does not change.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { App } from '../../src/app.js';
import { trigger } from '../helpers/trigger.js';

/** The longest this process's own work may hold the event loop while one tenant's large input is handled. */
export const LOOP_STALL_LIMIT_MS = 100;

export interface Watched<T> {
  result: T;
  /** The longest the loop was held by this process's work (CPU time within one stall), in milliseconds. */
  heldMs: number;
  /** The event loop's longest wall-clock stall (monitorEventLoopDelay), in milliseconds: the machine's load too. */
  maxStallMs: number;
  /** The status of each trigger another tenant sent meanwhile. */
  triggers: number[];
  /** The bodies of the first few refused. */
  refusals: string[];
}

/** The main thread's CPU time so far, in milliseconds, where it can be told from the other threads' (or null). */
export function mainThreadCpu(): (() => number) | null {
  const own = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.bind(process);
  if (own) return () => (own().user + own().system) / 1000;
  // Linux before Node 23.9: the main thread's (id = the process's) time on a CPU, in nanoseconds.
  const file = `/proc/self/task/${process.pid}/schedstat`;
  try {
    readFileSync(file);
  } catch {
    return null;
  }
  return () => Number(readFileSync(file, 'latin1').split(' ')[0]) / 1e6;
}

/** The process's CPU time so far (every thread's), in milliseconds: where no per-thread reading exists. */
export function processCpu(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * The CPU time the main thread spends within each turn of the loop, at 1 ms resolution: the longest. Not
 * process.cpuUsage alone, which counts every thread of the process, garbage collection's helpers included, that run
 * beside the loop without holding it (a turn of 53 ms read 87 ms of process CPU at the end of the export, 14 ms of the
 * main thread's). Where no per-thread reading exists, a turn's process CPU is capped at its wall-clock length.
 */
function holdMeter() {
  const thread = mainThreadCpu();
  const cpuNow = thread ?? processCpu;
  let lastCpu = cpuNow();
  let lastWall = performance.now();
  let held = 0;
  const timer = setInterval(() => {
    const [cpu, wall] = [cpuNow(), performance.now()];
    held = Math.max(held, thread ? cpu - lastCpu : Math.min(cpu - lastCpu, wall - lastWall));
    [lastCpu, lastWall] = [cpuNow(), performance.now()];
  }, 1);
  return {
    stop: () => {
      clearInterval(timer);
      return held;
    },
  };
}

/**
 * Runs `work` while another tenant (`key`) triggers calls one after another, `pauseMs` apart, and measures the loop.
 * At least one trigger is sent while `work` runs, whatever its length.
 */
export async function watchLoop<T>(app: App, key: string, work: () => Promise<T>, pauseMs = 200): Promise<Watched<T>> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const triggers: number[] = [];
  const refusals: string[] = [];
  let done = false;
  let n = 0;
  const triggering = (async () => {
    while (!done || triggers.length === 0) {
      n++;
      const phone = `+1415555${String(1000 + (n % 9000)).padStart(4, '0')}`;
      const res = await trigger(app, key, { phone_number: phone }, { 'x-forwarded-proto': 'https' });
      triggers.push(res.statusCode);
      if (res.statusCode !== 200 && refusals.length < 3) refusals.push(res.body);
      await sleep(pauseMs);
    }
  })();
  histogram.enable();
  const meter = holdMeter();
  try {
    const result = await work();
    done = true;
    await triggering;
    return { result, heldMs: meter.stop(), maxStallMs: histogram.max / 1e6, triggers, refusals };
  } finally {
    done = true;
    meter.stop();
    histogram.disable();
    await triggering.catch(() => undefined);
  }
}

/** A file of `+1202nnnnnnn` lines (with a reason on every tenth) just under `bytes`; how many rows it has. */
export function numbersFile(bytes: number, bad = false): { content: Buffer; rows: number } {
  const lines = ['phone_number,reason'];
  let size = lines[0]!.length + 1;
  for (let n = 1; ; n++) {
    // A bad row costs what a good one does: its number is only found too long once it is parsed.
    const line = bad
      ? `+1202${String(n).padStart(8, '0')},bad`
      : `+1202${String(n).padStart(7, '0')},${n % 10 === 0 ? 'asked' : ''}`;
    if (size + line.length + 1 > bytes) break;
    lines.push(line);
    size += line.length + 1;
  }
  return { content: Buffer.from(`${lines.join('\n')}\n`), rows: lines.length - 1 };
}
