// The bench's output: results as JSON and as a Markdown table (pooled latencies, median throughputs, targets met or not).
import fs from 'node:fs';
import path from 'node:path';
import type { MachineFacts } from './setup.js';

export interface Goal {
  name: string;
  value: number;
  unit: string;
  target: string;
  met: boolean;
}

export interface Row {
  scenario: string;
  throughput?: number;
  p50?: number;
  p90?: number;
  p99?: number;
  max?: number;
  note?: string;
}

export interface Results {
  generatedAt: string;
  /** The measured service's commit (`git describe --always --dirty` of its checkout), or null outside git. */
  commit: string | null;
  durationSeconds: number;
  machine: MachineFacts;
  conditions: string[];
  settings: Record<string, unknown>;
  /** One row per scenario: latencies pooled over every round's samples, throughputs the median of the rounds. */
  table: Row[];
  targets: Goal[];
  /** Every run's numbers, for anyone who wants more than the median. */
  runs: Record<string, unknown[]>;
}

const fmt = (n: number | undefined, digits = 1) =>
  n === undefined ? '–' : Number.isInteger(n) ? String(n) : n.toFixed(digits);

export function markdown(results: Results): string {
  const m = results.machine;
  const lines = [
    `# Benchmark results`,
    '',
    `Generated ${results.generatedAt} by \`npm run bench\` in ${Math.round(results.durationSeconds)} s, service at commit ${results.commit ?? 'unknown'}.`,
    '',
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}; Node ${m.node}; PostgreSQL ${m.postgres}; Redis ${m.redis}.`,
    '',
    ...results.conditions.map((c) => `- ${c}`),
    '',
    '| Scenario | Throughput (/s) | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) | Note |',
    '|---|---:|---:|---:|---:|---:|---|',
    ...results.table.map(
      (r) =>
        `| ${r.scenario} | ${fmt(r.throughput, 0)} | ${fmt(r.p50)} | ${fmt(r.p90)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${r.note ?? ''} |`,
    ),
    '',
    '| Target | Measured | Required | Met |',
    '|---|---:|---|---|',
    ...results.targets.map(
      (t) => `| ${t.name} | ${fmt(t.value, 2)} ${t.unit} | ${t.target} | ${t.met ? 'yes' : '**no**'} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

export function writeResults(dir: string, results: Results): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  const md = markdown(results);
  fs.writeFileSync(path.join(dir, 'latest.md'), md);
  return md;
}
