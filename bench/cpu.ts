// CPU time spent by the processes under test (Linux /proc): the service, and the PostgreSQL backends serving one
// database. CPU per request is steadier than requests per second on a shared 2-core machine.
import fs from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux architecture Node runs on

/** User + system CPU seconds of one process, or 0 once it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** PostgreSQL backends connected to `database` (their process title names it), by pid. */
export function backendPids(database: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const title = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.includes(` ${database} `)) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

export interface CpuSnapshot {
  service: number;
  database: Map<number, number>;
}

export function cpuSnapshot(servicePid: number, database: string): CpuSnapshot {
  return {
    service: processCpuSeconds(servicePid),
    database: new Map(backendPids(database).map((pid) => [pid, processCpuSeconds(pid)])),
  };
}

/** CPU seconds used since `before` by the service and by the database's backends (new backends count in full). */
export function cpuSince(
  before: CpuSnapshot,
  servicePid: number,
  database: string,
): { service: number; database: number } {
  let db = 0;
  for (const pid of backendPids(database)) db += processCpuSeconds(pid) - (before.database.get(pid) ?? 0);
  return { service: processCpuSeconds(servicePid) - before.service, database: db };
}
