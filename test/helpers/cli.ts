// callctl in process (runCli) against a test database, its output captured: the exit code, stdout and stderr.
import { runCli } from '../../src/cli/main.js';
import { testSecretsKey } from './database.js';
import { json } from './json.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as the one JSON object a `--json` command prints, of the shape the test expects. */
  json<T = Record<string, unknown>>(): T;
}

/** What a `--json` command prints on stderr when it fails. */
export interface CliError {
  error: string;
}

/**
 * `now` is the command's clock: a test whose app runs on an injected clock passes that clock, so that what the command
 * schedules (held deliveries released, a cancel) is due by the same time as the app's workers.
 */
export async function callctl(
  databaseUrl: string,
  args: string[],
  env: Record<string, string> = {},
  now: () => Date = () => new Date(),
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    // The run's secrets key: callctl seals secrets with the key the test apps open them with.
    env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', SECRETS_KEY: testSecretsKey(), ...env },
    now,
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
  });
  return { code, stdout, stderr, json: <T>() => json<T>(stdout) };
}
