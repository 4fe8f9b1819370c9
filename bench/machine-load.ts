// What the whole machine did during a measured run, from /proc (Linux): CPU busy and steal (time the hypervisor gave
// this VM's CPUs to someone else) per second, the run queue (procs_running), the load average and, where the kernel
// has it, CPU pressure (PSI: the share of time some runnable task waited for a CPU). Sampled every second in the
// bench runner, so that a slow call can be set beside what the machine was doing at that second.
import fs from 'node:fs';

interface CpuTicks {
  busy: number;
  steal: number;
  total: number;
}

/** The aggregate "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal (guest is inside user). */
function readTicks(): CpuTicks | null {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const total = user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal!;
    return { busy: user! + nice! + system! + irq! + softirq!, steal: steal!, total };
  } catch {
    return null;
  }
}

function procsRunning(): number {
  try {
    return Number(/procs_running (\d+)/.exec(fs.readFileSync('/proc/stat', 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

/** Microseconds some task waited for a CPU, since boot (PSI), or NaN without PSI. */
function cpuPressureUs(): number {
  try {
    return Number(/some .*total=(\d+)/.exec(fs.readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

const loadAverage1 = () => {
  try {
    return Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
};

export interface Second {
  /** Wall-clock ms at the end of the second. */
  at: number;
  /** Percent of all CPUs' time: busy (user, system, irq) and stolen. */
  busy: number;
  steal: number;
  running: number;
  /** Percent of the second some runnable task waited for a CPU (PSI), NaN without it. */
  pressure: number;
}

export interface MachineLoad {
  seconds: number;
  busy: { mean: number; max: number };
  steal: { mean: number; max: number };
  running: { mean: number; max: number };
  pressure: { mean: number; max: number };
  loadAverage: { start: number; end: number; max: number };
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const stats = (values: number[]) => {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return { mean: Number.NaN, max: Number.NaN };
  return { mean: round1(finite.reduce((a, b) => a + b, 0) / finite.length), max: round1(Math.max(...finite)) };
};

/** Busy, steal, run queue and pressure over a series of seconds (several rounds' together). */
export function summarizeSeconds(series: Second[]) {
  return {
    seconds: series.length,
    busy: stats(series.map((s) => s.busy)),
    steal: stats(series.map((s) => s.steal)),
    running: stats(series.map((s) => s.running)),
    pressure: stats(series.map((s) => s.pressure)),
  };
}

export function describeSeconds(m: ReturnType<typeof summarizeSeconds>): string {
  const pressure = Number.isFinite(m.pressure.mean)
    ? `; CPU pressure ${m.pressure.mean}% (max ${m.pressure.max}%)`
    : '';
  return `${m.seconds} s sampled: CPU busy ${m.busy.mean}% (max second ${m.busy.max}%), steal ${m.steal.mean}% (max ${m.steal.max}%), runnable ${m.running.mean} (max ${m.running.max})${pressure}`;
}

export interface Sampler {
  stop(): { summary: MachineLoad; seconds: Second[] };
}

/** Samples every second until stopped. */
export function sampleMachine(): Sampler {
  const series: Second[] = [];
  const loads: number[] = [loadAverage1()];
  let ticks = readTicks();
  let pressure = cpuPressureUs();
  let last = performance.timeOrigin + performance.now();
  const timer = setInterval(() => {
    const now = performance.timeOrigin + performance.now();
    const next = readTicks();
    const nextPressure = cpuPressureUs();
    if (ticks && next && next.total > ticks.total) {
      const total = next.total - ticks.total;
      series.push({
        at: now,
        busy: round1(((next.busy - ticks.busy) / total) * 100),
        steal: round1(((next.steal - ticks.steal) / total) * 100),
        running: procsRunning(),
        pressure: round1(((nextPressure - pressure) / 1000 / (now - last)) * 100),
      });
    }
    loads.push(loadAverage1());
    ticks = next;
    pressure = nextPressure;
    last = now;
  }, 1000);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      loads.push(loadAverage1());
      return {
        summary: {
          ...summarizeSeconds(series),
          loadAverage: { start: loads[0]!, end: loads.at(-1)!, max: Math.max(...loads) },
        },
        seconds: series,
      };
    },
  };
}

/** The sample covering a wall-clock moment (the first second that ends after it), if any. */
export function secondOf(series: Second[], at: number): Second | undefined {
  let lo = 0;
  let hi = series.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (series[mid]!.at < at) lo = mid + 1;
    else hi = mid;
  }
  return series[lo];
}

/**
 * The machine in the seconds of the slowest calls against all seconds: do the slow ones come when the CPUs were
 * busy, stolen or oversubscribed? `calls`: [wall-clock ms when the call was sent, its latency].
 */
export function slowCallSeconds(series: Second[], calls: [number, number][], threshold: number) {
  const slow = calls.filter(([, latency]) => latency >= threshold);
  const seconds = slow.map(([sentAt, latency]) => secondOf(series, sentAt + latency)).filter((s) => s !== undefined);
  return {
    calls: slow.length,
    /** How many of them arrived within a sampled second (the last ones may come after the sampling stopped). */
    sampled: seconds.length,
    threshold,
    busy: stats(seconds.map((s) => s.busy)),
    steal: stats(seconds.map((s) => s.steal)),
    running: stats(seconds.map((s) => s.running)),
    pressure: stats(seconds.map((s) => s.pressure)),
  };
}

export function describeLoad(m: MachineLoad): string {
  const pressure = Number.isFinite(m.pressure.mean)
    ? `; CPU pressure ${m.pressure.mean}% (max ${m.pressure.max}%)`
    : '';
  return `CPU busy ${m.busy.mean}% (max second ${m.busy.max}%), steal ${m.steal.mean}% (max ${m.steal.max}%), runnable ${m.running.mean} (max ${m.running.max})${pressure}; load average ${m.loadAverage.start}→${m.loadAverage.end} (max ${m.loadAverage.max})`;
}
