// callctl in process (runCli) against a test database, its output captured: the exit code, stdout and stderr.
import { runCli } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as the one JSON object a `--json` command prints. */
  json(): Record<string, unknown>;
}

export async function callctl(databaseUrl: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env },
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) as Record<string, unknown> };
}
