// What a callctl command is: its entry in the command table, the context it runs in, and what it returns.
import type { Config } from '../config.js';
import type { MigrateResult, Storage } from '../storage/index.js';
import type { FlagName, Values } from './flags.js';

export interface Context {
  storage: Storage;
  config: Config;
  /** What the migration that runs before every command did; `callctl migrate` reports it. */
  migrations: MigrateResult;
  /** The database the command works on (DATABASE_URL, or the embedded server's). */
  databaseUrl: string;
  /** The command's clock: what it schedules (held deliveries released, a cancel, a link's expiry) is due from it. */
  now: () => Date;
}

export type Result = Record<string, unknown>;

export interface Command {
  words: string[];
  args: string[];
  flags: FlagName[];
  required?: FlagName[];
  usage: string;
  summary: string;
  /** A line for people after the output, e.g. that a secret is not shown again. */
  notice?: string | ((result: Result, args: string[]) => string | undefined);
  /** Output for people when the generic `key: value` layout does not serve (a call with its attempts). */
  human?: (result: Result) => string;
  /** Command lines that work, for help ("<account-id>" and the like stand for real ids). */
  examples?: string[];
  /** Usage checks that need no database. */
  check?(args: string[], values: Values): void;
  run(ctx: Context, args: string[], values: Values): Promise<Result>;
}
