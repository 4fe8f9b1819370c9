// The benchmark stays a benchmark, not a lab notebook: bench/README.md says how to run each bench and what it measures
// today, in at most 300 lines (git keeps the history), and code points at the findings that explain it in
// docs/performance.md, never at a bench session that a rewrite of the README would leave behind.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors } from './anchors.js';

const README_MAX_LINES = 300;
/** The product's code; generated code aside. */
const PRODUCT = ['src', 'plugins', 'schemas'];
const GENERATED = path.join('src', 'generated');
/** Where a comment may point into docs/performance.md. */
const POINTING = [...PRODUCT, 'test', 'bench', 'scripts', 'vitest.config.ts', 'vitest.reliability.config.ts'];

/** A pointer into the bench's README, or a bench session named by its ordinal ("twenty-ninth session(s)"). */
const ORDINAL =
  '(?:(?:twenty|thirty|forty)-)?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|' +
  'thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth|fortieth)';
const NOTEBOOK = new RegExp(`bench/README|\\b${ORDINAL}(?: and ${ORDINAL})? sessions?\\b`, 'i');

function sourceFiles(entry: string): string[] {
  if (!fs.existsSync(entry) || entry === GENERATED) return [];
  if (!fs.statSync(entry).isDirectory()) return /\.(ts|js|mjs|sql|eta)$/.test(entry) ? [entry] : [];
  return fs.readdirSync(entry).flatMap((name) => sourceFiles(path.join(entry, name)));
}

describe('the benchmark is not a notebook', () => {
  it(`bench/README.md has at most ${README_MAX_LINES} lines`, () => {
    const lines = fs.readFileSync('bench/README.md', 'utf8').split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('finds bench sessions and README pointers as they were written', () => {
    for (const text of ['bench/README.md, "Scale"', 'twenty-eighth and twenty-ninth sessions', 'Thirtieth session'])
      expect(text).toMatch(NOTEBOOK);
    for (const text of [
      'the session cookie of a first sign-in',
      'docs/performance.md#named-statements',
      'bench:scale, queue',
    ])
      expect(text).not.toMatch(NOTEBOOK);
  });

  it('no file of src/, plugins/ or schemas/ points at bench/README.md or a bench session', () => {
    const found = PRODUCT.flatMap(sourceFiles).flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (NOTEBOOK.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('every pointer into docs/performance.md names one of its headings', () => {
    const headings = anchors(fs.readFileSync('docs/performance.md', 'utf8'));
    const files = POINTING.flatMap(sourceFiles);
    expect(files.length).toBeGreaterThan(100);
    const broken = files.flatMap((file) =>
      [...fs.readFileSync(file, 'utf8').matchAll(/docs\/performance\.md#([a-z0-9-]+)/g)]
        .filter(([, anchor]) => !headings.has(anchor!))
        .map(([pointer]) => `${file}: ${pointer}`),
    );
    expect(broken).toEqual([]);
  });
});
