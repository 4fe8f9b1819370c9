// callctl's data lifecycle command: one retention pass now, as the server's background job runs it, with the rows it
// deleted per table.
import { retentionPolicy, runRetentionPass } from '../jobs/retention.js';
import { createRetention } from '../storage/index.js';
import type { Command } from './command-types.js';

export const RETENTION_COMMANDS: Command[] = [
  {
    words: ['retention', 'run'],
    args: [],
    flags: [],
    usage: 'callctl retention run',
    summary:
      'Delete now every row past its retention (as the servers do every RETENTION_INTERVAL_SECONDS); rows deleted per table',
    notice: (result) =>
      result.outcome === 'skipped'
        ? 'Another process is deleting right now (it holds the retention lock): nothing was deleted by this command.'
        : undefined,
    run: async ({ config, databaseUrl, now }) => {
      const retention = createRetention(databaseUrl);
      try {
        const { outcome, deleted } = await runRetentionPass({
          retention,
          now: now(),
          policy: retentionPolicy(config),
          batchSize: config.RETENTION_BATCH_SIZE,
          pauseMs: config.RETENTION_PAUSE_MS,
        });
        return { outcome, deleted, total: Object.values(deleted).reduce((a, b) => a + b, 0) };
      } finally {
        await retention.close();
      }
    },
  },
];
