// What a callctl command is: its entry in the command table, the context it runs in, and what it returns: a result
// object that main.ts prints (JSON or for people), or RAW_OUTPUT when the command wrote its own bytes on stdout.
import type { Config } from '../config.js';
import type { MigrateResult, Storage } from '../storage/index.js';
import type { FlagName, Values } from './flags.js';

export interface Context {
  storage: Storage;
  config: Config;
  /** What the migration that runs before every command did; `callctl migrate` reports it. */
  migrations: MigrateResult;
  /** Secrets an earlier release stored in clear, sealed before this command ran (as the server does at start). */
  sealedSecrets: number;
  /** The database the command works on (DATABASE_URL, or the embedded server's). */
  databaseUrl: string;
  /** The command's clock: what it schedules (held deliveries released, a cancel, a link's expiry) is due from it. */
  now: () => Date;
  /**
   * Writes raw output on stdout (a CSV), resolved once written (stdout's pace, not memory's); a command that uses it
   * returns RAW_OUTPUT and prints nothing else there.
   */
  stdout: (chunk: string | Uint8Array) => Promise<void>;
  /** All of stdin, read once when first asked for (a secret given as `-`); '' when nothing is piped in. */
  stdin: () => Promise<string>;
}

/** What a command returns when it wrote its output on stdout itself (ctx.stdout): main.ts prints nothing more. */
export const RAW_OUTPUT = Symbol('raw output');

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
  run(ctx: Context, args: string[], values: Values): Promise<Result | typeof RAW_OUTPUT>;
}
