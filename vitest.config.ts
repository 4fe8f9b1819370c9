// Tests run against real PostgreSQL (TEST_DATABASE_URL or an embedded server) and real Redis (TEST_REDIS_URL).
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take 40 s or more in a full run (measured under load, issue 46), longest first. Vitest starts the
 * files it knows to be long first, but it learns that from a cache under node_modules, which CI's fresh install does
 * not have: there it went by file size, and the longest files started last, with the other workers idle while they
 * ran. Files not listed keep vitest's own order.
 */
const LONG_FILES = [
  'test/dashboard/tenancy.test.ts',
  // Waits out a real rate-limit minute (the Python client's retry on 429).
  'test/clients/python-client.test.ts',
  'test/browser/every-page.test.ts',
  'test/dashboard/users.test.ts',
  'test/dashboard/large-inputs.test.ts',
  'test/openapi/contract.test.ts',
  'test/dispatch/dispatcher.test.ts',
  'test/browser/calls.test.ts',
  'test/server/server-process.test.ts',
  'test/browser/live.test.ts',
  'test/browser/agents.test.ts',
  'test/storage/migrate.test.ts',
  'test/storage/embedded-postgres.test.ts',
  'test/routes/trigger-contract.test.ts',
  'test/dashboard/callctl-users.test.ts',
  'test/dispatch/crash-recovery.test.ts',
  'test/browser/cancel.test.ts',
  'test/dispatch/leadership.test.ts',
  'test/dashboard/forgot-password.test.ts',
  'test/dashboard/do-not-call.test.ts',
  'test/browser/do-not-call.test.ts',
  'test/plugins/rate-limit.test.ts',
];

class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const i = LONG_FILES.indexOf(path.relative(file.project.config.root, file.moduleId).split(path.sep).join('/'));
      return i === -1 ? LONG_FILES.length : i;
    };
    // Stable: the rest keep vitest's own order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/reliability/**'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/file-setup.ts'],
    pool: 'forks',
    // A worker runs its files over one set of loaded modules: isolated, each of the 148 files loaded the app's module
    // graph again, 300 of the suite's 1,500 worker-seconds ("import" in vitest's summary), and CI ran over 20
    // minutes once. What a file changes in the process is put back by test/file-setup.ts; the helpers stop what a
    // file started when it ends (test/helpers/file-end.ts).
    isolate: false,
    // Most test time is spent waiting (on PostgreSQL, timers, child processes), not computing: four files at a time
    // keep two cores busy without a test failing under load (docs/performance.md#four-test-files-at-a-time).
    maxWorkers: 4,
    sequence: { sequencer: LongFilesFirst },
    // Timeouts catch a hang, not slowness: on a busy 2-core machine (a second suite beside this one) a test that
    // takes 10 s alone can take 40. What must be fast is asserted against the waits it must not make; speed is bench/'s.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    env: { LOG_LEVEL: 'silent' },
  },
});
