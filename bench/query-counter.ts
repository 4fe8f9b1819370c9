// Diagnostic preload for the service process: counts every PostgreSQL statement (by its first words) and writes
// the tally to QUERY_COUNT_FILE at exit, to count round trips per request. Not used by the measured runs.
// Usage: node --import tsx --import ./bench/query-counter.ts dist/src/server.js
import fs from 'node:fs';
import { createRequire } from 'node:module';

const pg = createRequire(import.meta.url)('pg') as typeof import('pg');
const counts = new Map<string, number>();
// eslint-disable-next-line @typescript-eslint/unbound-method -- applied below with the client as its `this`
const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;

pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const first = args[0] as string | { text?: string } | undefined;
  const text = typeof first === 'string' ? first : (first?.text ?? '?');
  const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  return original.apply(this, args);
} as typeof pg.Client.prototype.query;

process.on('exit', () => {
  const file = process.env.QUERY_COUNT_FILE;
  if (!file) return;
  fs.writeFileSync(file, JSON.stringify(Object.fromEntries([...counts].sort((a, b) => b[1] - a[1])), null, 2));
});
