// callctl, the operator command (the dashboard's stand-in): parses argv, opens the server's database, runs one command.
import { parseArgs } from 'node:util';
import { StringDecoder } from 'node:string_decoder';
import { pathToFileURL } from 'node:url';
import { AdminError } from '../admin/errors.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { stringifyWithRaw } from '../domain/raw-json.js';
import { loadSecrets } from '../secrets/keys.js';
import { prepareStoredSecrets, SecretsKeyRefused } from '../secrets/stored-secrets.js';
import { createStorage, locateDatabase } from '../storage/index.js';
import { migrate, MigrationError } from '../storage/index.js';
import { RAW_OUTPUT, type Command, type Result } from './command-types.js';
import { COMMANDS, UsageError } from './commands.js';
import { OPTIONS, type Values } from './flags.js';
import {
  commandHelpObject,
  commandHelpText,
  commandName,
  commandsOf,
  groupHelpObject,
  groupHelpText,
  helpObject,
  helpText,
} from './help.js';
import { formatHuman } from './output.js';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  /** The clock every command schedules by: the real one at the edge below, a test's own in tests. */
  now: () => Date;
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /**
   * Raw output on stdout (a CSV), resolved once written; without it, the chunks go through `stdout` as UTF-8 text.
   * The process's own waits for stdout, so that a large export does not gather in memory.
   */
  rawStdout?: (chunk: string | Uint8Array) => Promise<void>;
  /** All of stdin (a secret given as `-`); without it, stdin is empty. */
  stdin?: () => Promise<string>;
}

const EXIT = { ok: 0, failed: 1, usage: 2, config: 78 } as const;

/** The command the words name, or the group when they name only a group (`callctl agency`). */
function findCommand(positionals: string[]): { command: Command; rest: string[] } | { group: string } {
  const matches = COMMANDS.filter((c) => c.words.every((word, i) => positionals[i] === word));
  const command = matches.sort((a, b) => b.words.length - a.words.length)[0];
  if (command) return { command, rest: positionals.slice(command.words.length) };
  const [group = ''] = positionals;
  const related = commandsOf(group).map(commandName);
  if (related.length === 0) throw new UsageError(`Unknown command "${group}"; see callctl --help`);
  if (positionals.length === 1) return { group };
  throw new UsageError(
    `Unknown command "${positionals.slice(0, 2).join(' ')}" (expected ${related.join(' or ')}); see callctl ${group} --help`,
  );
}

function checkUsage(command: Command, args: string[], values: Values): void {
  const name = commandName(command);
  if (args.length < command.args.length) throw new UsageError(`Missing <${command.args[args.length]}> for "${name}"`);
  if (args.length > command.args.length)
    throw new UsageError(`Unexpected argument "${args[command.args.length]}" for "${name}"`);
  for (const [flag, value] of Object.entries(values)) {
    if (value === undefined || flag === 'json' || flag === 'help') continue;
    if (!(command.flags as string[]).includes(flag)) throw new UsageError(`Unknown flag --${flag} for "${name}"`);
  }
  for (const flag of command.required ?? []) {
    if (values[flag] === undefined) throw new UsageError(`Missing --${flag} for "${name}"`);
  }
  command.check?.(args, values);
}

/** Raw chunks through a text-only `stdout`, decoded as UTF-8 (a character split between two chunks kept whole). */
function textStdout(stdout: (s: string) => void) {
  const decoder = new StringDecoder('utf8');
  return async (chunk: string | Uint8Array) => {
    const text = typeof chunk === 'string' ? decoder.end() + chunk : decoder.write(Buffer.from(chunk));
    if (text !== '') stdout(text);
  };
}

/** Prisma puts the invocation and code frame first; the last line is the reason a person needs. */
function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (
    error instanceof AdminError ||
    error instanceof MigrationError ||
    error instanceof ConfigError ||
    error instanceof SecretsKeyRefused
  )
    return error.message;
  const lines = error.message
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.at(-1) ?? error.name;
}

async function execute(
  command: Command,
  args: string[],
  values: Values,
  config: Config,
  now: () => Date,
  stdout: (chunk: string | Uint8Array) => Promise<void>,
  stdin: () => Promise<string>,
  log?: (msg: string) => void,
): Promise<Result | typeof RAW_OUTPUT> {
  const location = await locateDatabase(config, 'cli', log);
  try {
    // A fresh DATA_DIR works with any command: the schema is brought up to date first, as the server does.
    const migrations = await migrate(location.url);
    const storage = createStorage(location.url, { max: 2 });
    try {
      // Then the secrets, as the server does: refused when sealed with a key callctl lacks, those in clear sealed.
      const { sealed } = await prepareStoredSecrets(storage, loadSecrets(config));
      const context = {
        storage,
        config,
        migrations,
        sealedSecrets: sealed,
        databaseUrl: location.url,
        now,
        stdout,
        stdin,
      };
      return await command.run(context, args, values);
    } finally {
      await storage.close();
    }
  } finally {
    await location.release();
  }
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  // Decided before parsing, so that even a parse error is reported in the form the caller asked for.
  const json = argv.includes('--json');
  const print = (result: Result, command?: Command, args: string[] = []) => {
    // stringifyWithRaw: a call's metadata is written as the client wrote it (key order kept).
    if (json) return io.stdout(`${stringifyWithRaw(result)}\n`);
    const notice = typeof command?.notice === 'function' ? command.notice(result, args) : command?.notice;
    if (!command?.human) return io.stdout(formatHuman(result, notice));
    return io.stdout(`${command.human(result)}${notice ? `\n${notice}\n` : ''}`);
  };
  const fail = (message: string, code: number, usage?: string) => {
    if (json) io.stderr(`${JSON.stringify({ error: message })}\n`);
    else io.stderr(`callctl: ${message}\n${usage ? `usage: ${usage}\n` : ''}`);
    return code;
  };

  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: true }));
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]?.replace(/\. To specify .*$/, '') ?? 'Invalid arguments';
    return fail(`${message}; see callctl --help`, EXIT.usage);
  }

  const wantsHelp = values.help === true || positionals[0] === 'help';
  const words = positionals[0] === 'help' ? positionals.slice(1) : positionals;
  if (wantsHelp && words.length === 0) {
    if (json) print(helpObject());
    else io.stdout(helpText());
    return EXIT.ok;
  }
  if (words.length === 0) {
    if (!json) io.stderr(helpText());
    return fail('Missing command; see callctl --help', EXIT.usage);
  }

  let found: ReturnType<typeof findCommand>;
  try {
    found = findCommand(words);
  } catch (error) {
    return fail((error as Error).message, EXIT.usage);
  }
  if ('group' in found) {
    // A group alone lists its commands: on stdout when asked for, with a usage error otherwise.
    if (wantsHelp) {
      if (json) print(groupHelpObject(found.group));
      else io.stdout(groupHelpText(found.group));
      return EXIT.ok;
    }
    if (!json) io.stderr(groupHelpText(found.group));
    return fail(
      `Missing command after "${found.group}" (expected ${commandsOf(found.group).map(commandName).join(' or ')})`,
      EXIT.usage,
    );
  }
  const { command, rest } = found;
  if (wantsHelp) {
    if (json) print(commandHelpObject(command));
    else io.stdout(commandHelpText(command));
    return EXIT.ok;
  }
  try {
    checkUsage(command, rest, values);
  } catch (error) {
    return fail((error as Error).message, EXIT.usage, command.usage);
  }

  let config: Config;
  try {
    config = loadConfig(io.env);
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message, EXIT.config);
    throw error;
  }

  try {
    // Starting an embedded server takes seconds: tell people why; --json callers get nothing but the result.
    const log = json ? undefined : (msg: string) => io.stderr(`callctl: ${msg}\n`);
    const stdout = io.rawStdout ?? textStdout(io.stdout);
    let read: Promise<string> | undefined;
    const stdin = () => (read ??= io.stdin?.() ?? Promise.resolve(''));
    const result = await execute(command, rest, values, config, io.now, stdout, stdin, log);
    if (result !== RAW_OUTPUT) print(result, command, rest);
    return EXIT.ok;
  } catch (error) {
    // What only the account shows (a client given an agency's settings) is a usage error too, found once it is read.
    if (error instanceof UsageError) return fail(error.message, EXIT.usage, command.usage);
    return fail(reason(error), EXIT.failed);
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  // A reader that goes away (`callctl calls export ... | head`): the raw write's callback fails the command (exit 1).
  process.stdout.on('error', () => undefined);
  void runCli(process.argv.slice(2), {
    env: process.env,
    // callctl's one real clock.
    now: () => new Date(),
    stdout: (s) => {
      process.stdout.write(s);
    },
    stderr: (s) => {
      process.stderr.write(s);
    },
    stdin: async () => {
      // A terminal is no pipe: nothing was given (a secret flag given as - then says so).
      if (process.stdin.isTTY) return '';
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
      return Buffer.concat(chunks).toString('utf8');
    },
    rawStdout: (chunk) =>
      new Promise((resolve, reject) => {
        process.stdout.write(chunk, (error) => (error ? reject(error) : resolve()));
      }),
  }).then((code) => {
    process.exitCode = code;
  });
}
