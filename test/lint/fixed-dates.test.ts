// No fixed date in test/ lies within a year of today: a test on a fixed clock must not pass or fail by where the real
// date lies relative to its own (issue 45, point 0: the suite went red when the real time passed a test's clock).
// The dates sit in 2048-2058 (CONTRIBUTING.md, "Tests", says why there); this file warns a year before one is reached.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const YEAR_MS = 365 * 24 * 3600_000;
/** 2054-12-01, 2054-12-01T10:00:00Z and the like; a date in a longer run of digits (a migration's name) is not one. */
const ISO_DATE = /(?<![0-9])((?:19|20)[0-9]{2})-([01][0-9])-([0-3][0-9])(?![0-9])/g;
/** Date.UTC(2054, 0, 15) and new Date(2054, 0, 15): the month counts from 0. */
const NUMERIC_DATE = /(?:Date\.UTC|new Date)\(\s*((?:19|20)[0-9]{2})\s*,\s*([0-9]{1,2})(?:\s*,\s*([0-9]{1,2}))?/g;
/** Paths of test/ where a date is not a time (none so far): each with the reason. */
const EXCEPTIONS: Record<string, string> = {};

interface FixedDate {
  at: string;
  text: string;
  time: number;
}

/** Every fixed date written in `source`, with its line. */
function fixedDates(source: string, file: string): FixedDate[] {
  const found: FixedDate[] = [];
  source.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(ISO_DATE))
      found.push({ at: `${file}:${i + 1}`, text: m[0], time: Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!) });
    for (const m of line.matchAll(NUMERIC_DATE))
      found.push({ at: `${file}:${i + 1}`, text: m[0], time: Date.UTC(+m[1]!, +m[2]!, m[3] ? +m[3] : 1) });
  });
  return found;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
    .filter((file) => !file.includes('node_modules') && !file.endsWith('.png'));
}

/** The fixed dates of test/ that lie within a year of `today`, either side. */
async function tooNear(today: number): Promise<string[]> {
  const near: string[] = [];
  for (const file of await filesUnder('test')) {
    if (EXCEPTIONS[file]) continue;
    for (const date of fixedDates(await readFile(path.join(ROOT, file), 'utf8'), file))
      if (Math.abs(date.time - today) < YEAR_MS) near.push(`${date.at}: ${date.text}`);
  }
  return near;
}

describe('fixed dates in test/', () => {
  it('none lies within a year of today (move them by whole multiples of 28 years, see CONTRIBUTING.md)', async () => {
    expect(await tooNear(Date.now())).toEqual([]);
  });

  it('finds the forms tests write dates in, and only those', () => {
    const today = new Date();
    const iso = today.toISOString();
    const source = [
      `const clock = { now: new Date('${iso}') };`,
      `it.each([Date.UTC(${today.getUTCFullYear()}, ${today.getUTCMonth()}, ${today.getUTCDate()})])`,
      `expect(day).toBe('${iso.slice(0, 10)}');`,
      `const NAME = '${iso.slice(0, 10).replaceAll('-', '')}100000_a_migration';`,
    ].join('\n');
    const found = fixedDates(source, 'x.ts');
    expect(found.map((d) => d.at)).toEqual(['x.ts:1', 'x.ts:2', 'x.ts:3']);
    for (const date of found) expect(Math.abs(date.time - today.getTime())).toBeLessThan(24 * 3600_000);
  });

  it('would refuse a date of today written in a test file', async () => {
    // The scan itself, run as if today were the first fixed date of the suite.
    const [first] = fixedDates(await readFile(path.join(ROOT, 'test/dashboard/overview.test.ts'), 'utf8'), 'x');
    expect(first).toBeDefined();
    expect((await tooNear(first!.time)).length).toBeGreaterThan(0);
  });
});
