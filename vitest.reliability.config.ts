// npm run test:reliability: fault, load and hostile-input scenarios (minutes); each starts its own servers.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/file-setup.ts'],
    pool: 'forks',
    testTimeout: 600_000,
    hookTimeout: 120_000,
    // Scenarios measure latency and kill processes: one file at a time keeps them honest on 2 cores.
    fileParallelism: false,
    env: { LOG_LEVEL: 'silent' },
  },
});
