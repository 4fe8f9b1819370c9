// Tests run against real PostgreSQL (TEST_DATABASE_URL or an embedded server) and real Redis (TEST_REDIS_URL).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/reliability/**'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Most test time is spent waiting (on PostgreSQL, timers, child processes), not computing: four files at a time
    // keep two cores busy without a test failing under load (bench/README.md, "Figures behind code comments").
    maxWorkers: 4,
    // Timeouts catch a hang, not slowness: on a busy 2-core machine (a second suite beside this one) a test that
    // takes 10 s alone can take 40. What must be fast is asserted against the waits it must not make; speed is bench/'s.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    env: { LOG_LEVEL: 'silent' },
  },
});
