// npm run screenshots: the pictures of the dashboard in docs/dashboard.md, taken from a real run. Runs the browser
// test that takes them (test/browser/every-page.test.ts: the service as a real process with the simulated dialer, a
// showcase agency made through src/admin, every page checked and pictured at 1280 px and at 390 px in Chromium), so
// the pictures and the tests come from one showcase; the script only chooses where they go: a new temporary folder,
// which it prints, or docs/screenshots/ (tracked files) only when asked with --update, or --out <dir>.
//
// The database: DATABASE_URL (or TEST_DATABASE_URL), a PostgreSQL server on which the test makes its databases and
// drops them; unset, the tests' embedded PostgreSQL.
// Needs Debian's Chromium headless shell (apt-get install -y --no-install-recommends chromium-headless-shell).
// Usage: npm run screenshots [-- --out <dir> | --update]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';

const CHROMIUM = '/usr/bin/chromium-headless-shell';
const SCREENSHOTS_DIR = path.join(PROJECT_ROOT, 'docs', 'screenshots');
const TEST_FILE = 'test/browser/every-page.test.ts';

function main(): number {
  const outIndex = process.argv.indexOf('--out');
  const update = outIndex < 0 && process.argv.includes('--update');
  const outDir = update
    ? SCREENSHOTS_DIR
    : outIndex > 0
      ? path.resolve(process.argv[outIndex + 1] ?? '')
      : mkdtempSync(path.join(os.tmpdir(), 'oct-screenshots-out-'));
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `npm run screenshots needs Chromium's headless shell at ${CHROMIUM}: ` +
        'apt-get install -y --no-install-recommends chromium-headless-shell',
    );
  }
  const env: NodeJS.ProcessEnv = { ...process.env, ...(update ? { SCREENSHOTS: '1' } : { SCREENSHOTS_OUT: outDir }) };
  const databaseUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (databaseUrl) env.TEST_DATABASE_URL = databaseUrl;
  const vitest = path.join(PROJECT_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const run = spawnSync(process.execPath, [vitest, 'run', TEST_FILE], { cwd: PROJECT_ROOT, env, stdio: 'inherit' });
  if (run.status !== 0) return run.status ?? 1;
  for (const file of readdirSync(outDir)
    .filter((name) => name.endsWith('.png'))
    .sort())
    process.stdout.write(`wrote ${path.relative(process.cwd(), path.join(outDir, file))}\n`);
  return 0;
}

try {
  process.exitCode = main();
} catch (error) {
  process.stderr.write(`${(error as Error).stack ?? (error as Error).message}\n`);
  process.exitCode = 1;
}
