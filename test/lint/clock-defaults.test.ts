// What src/admin and src/storage schedule is due by the caller's clock (the app's `fastify.now()`, callctl's at its
// edge, a test's injected one): a `now` that falls back to the real time made held deliveries due at the real time
// while a test's workers ran on its own clock (issue 45, point 0).
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** `now = new Date()`, `now ?? new Date()`, `input.now ?? new Date()` and the like. */
const DEFAULT_CLOCK = /(?:=|\?\?|\|\|)\s*new Date\(\)/;

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(dir, e.name));
}

describe('the clock of what src/admin and src/storage schedule', () => {
  it('is an argument: no default of the real time', async () => {
    const found: string[] = [];
    for (const file of [...(await sources('src/admin')), ...(await sources('src/storage'))]) {
      const lines = (await readFile(path.join(ROOT, file), 'utf8')).split('\n');
      lines.forEach((line, i) => {
        if (DEFAULT_CLOCK.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });
});
