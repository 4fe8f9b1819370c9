// Once per test run: find PostgreSQL (TEST_DATABASE_URL, else an embedded server under .data/test) and build a
// migrated template database that each test file clones (CREATE DATABASE ... TEMPLATE is fast); and make the run's
// temporary directory, which every file's TMPDIR is (test/file-setup.ts) and which goes with the run.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../src/storage/embedded-postgres.js';
import { migrate } from '../src/storage/migrate.js';

export const TEMPLATE_DATABASE = `oct_template_${process.pid}`;
/** Every test file's databases are named with this (helpers/database.ts), so that the run can find those left behind. */
const TEST_DATABASE_PREFIX = `oct_test_${process.pid}_`;

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    testDatabasePrefix: string;
    redisUrl: string | null;
    tmpDir: string;
    serverEntry: string | null;
  }
}

/**
 * The run's temporary directory. Tests make directories (copies of the migrations, dial logs, a browser's profile, an
 * embedded server's data) and child processes write there too; some 90 were left in $TMPDIR after every run. One
 * directory removed at the end keeps a developer's disk clean whatever a test forgets. Open to every user, sticky, as
 * /tmp is: when the tests run as root, the embedded PostgreSQL runs as its own system user and reaches its data
 * directory and password file under it, and a test runs the service as an ordinary user, whose tsx keeps its cache
 * there.
 */
async function runTmpDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `oct-test-run-${process.pid}-`));
  await fs.chmod(dir, 0o1777);
  return dir;
}

/**
 * The one-file build of the server (dist/server.mjs) when it is built from the sources as they are now, else null:
 * the tests then start src/server.ts through tsx. Started from the build, a server costs a fifth of the CPU (0.9 s
 * against 4 s on this machine), and the suite starts dozens. Asked once, of scripts/build-state.js as a command
 * (scripts/ and test/ import nothing from each other): npm install builds, so a fresh checkout's run uses the build,
 * and a source edited since makes the whole run use the sources.
 */
function serverEntry(): string | null {
  const bundle = path.resolve('dist/server.mjs');
  if (!existsSync(bundle)) return null;
  const status = JSON.parse(
    execFileSync(process.execPath, [path.resolve('scripts/build-state.js')], { encoding: 'utf8' }),
  ) as {
    stale: boolean;
  };
  return status.stale ? null : bundle;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * The checkout's own secrets key: what `npm start` makes under the default DATA_DIR. A test that leaves DATA_DIR and
 * SECRETS_KEY to their defaults writes it, and the directory it makes (0700) then stops the newcomer's embedded
 * PostgreSQL under .data/test as root ("the postgres system user cannot reach .data/test").
 */
const PROJECT_SECRETS_KEY = path.resolve('.data', 'secrets.key');

export default async function setup(project: TestProject) {
  const keyBefore = existsSync(PROJECT_SECRETS_KEY);
  const tmpDir = await runTmpDir();
  const removeTmp = () => fs.rm(tmpDir, { recursive: true, force: true });
  let release = async () => {};
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    const embedded = await startEmbeddedPostgres(path.resolve('.data/test'), 'cli');
    adminUrl = embedded.url;
    release = () => embedded.close();
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
    await migrate(withDatabase(adminUrl, TEMPLATE_DATABASE));
  } catch (error) {
    // No teardown runs for a setup that failed: the embedded server it started must not outlive the run.
    await admin.end().catch(() => undefined);
    await release();
    await removeTmp();
    throw error;
  }

  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', TEMPLATE_DATABASE);
  project.provide('testDatabasePrefix', TEST_DATABASE_PREFIX);
  project.provide('redisUrl', process.env.TEST_REDIS_URL ?? null);
  project.provide('tmpDir', tmpDir);
  project.provide('serverEntry', serverEntry());

  // Each test file's databases are dropped when it ends (helpers/file-end.ts): one still here says a cleanup did not
  // run, and the run fails (once they are dropped).
  return async () => {
    const left: string[] = [];
    try {
      const { rows } = await admin.query<{ name: string }>(
        `SELECT datname AS name FROM pg_database WHERE starts_with(datname, $1) ORDER BY 1`,
        [TEST_DATABASE_PREFIX],
      );
      left.push(...rows.map((r) => r.name));
      for (const name of left) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`).catch(() => undefined);
    } finally {
      await admin.end();
      await release();
      await removeTmp();
    }
    if (left.length > 0) {
      // Vitest reports an error thrown here but exits 0: the run fails by its exit code.
      process.exitCode = 1;
      throw new Error(`${left.length} test databases were left when their files ended: ${left.join(', ')}`);
    }
    if (!keyBefore && existsSync(PROJECT_SECRETS_KEY)) {
      await fs.rm(PROJECT_SECRETS_KEY);
      process.exitCode = 1;
      throw new Error(
        `a test wrote ${PROJECT_SECRETS_KEY} (removed now): give its config DATA_DIR '.data/test' and the run's key ` +
          '(SECRETS_KEY: testSecretsKey()), as buildTestApp does, or a directory of its own',
      );
    }
  };
}
