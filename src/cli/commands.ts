// The callctl command table: each command's words, arguments and flags, and the admin function it is a thin layer over.
import type { ParseArgsConfig } from 'node:util';
import { createAgency, createClient, generateKey, setApiAccess, setPlan } from '../admin/accounts.js';
import { createAgent, setDefaultAgent } from '../admin/agents.js';
import { listCalls, showCall } from '../admin/calls.js';
import { replayDelivery, setWebhook } from '../admin/webhooks.js';
import type { Config } from '../config.js';
import type { PrismaClient } from '../storage/database.js';
import type { MigrateResult } from '../storage/migrate.js';

/** A mistake in how callctl was called (exit 2), told apart from a refused operation (exit 1). */
export class UsageError extends Error {
  override name = 'UsageError';
}

// One option set for all commands, because parseArgs needs it before the command is known;
// each command then rejects the flags that are not its own.
export const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  plan: { type: 'string' },
  agency: { type: 'string' },
  account: { type: 'string' },
  phone: { type: 'string' },
  timezone: { type: 'string' },
  window: { type: 'string', multiple: true },
  'outside-window': { type: 'string' },
  url: { type: 'string' },
  status: { type: 'string' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

export type FlagName = Exclude<keyof typeof OPTIONS, 'json' | 'help'>;

export interface Values {
  json?: boolean;
  help?: boolean;
  name?: string;
  plan?: string;
  agency?: string;
  account?: string;
  phone?: string;
  timezone?: string;
  window?: string[];
  'outside-window'?: string;
  url?: string;
  status?: string;
}

export interface Context {
  prisma: PrismaClient;
  config: Config;
  /** What the migration that runs before every command did; `callctl migrate` reports it. */
  migrations: MigrateResult;
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
  notice?: string;
  /** Usage checks that need no database. */
  check?(args: string[], values: Values): void;
  run(ctx: Context, args: string[], values: Values): Promise<Result>;
}

// The arity checks in main.ts guarantee that every declared argument is present.
const arg = (args: string[], index: number): string => args[index] ?? '';
const flag = (values: Values, name: 'name' | 'agency' | 'account' | 'url'): string => values[name] ?? '';

const ON_OFF = ['on', 'off'];

export const COMMANDS: Command[] = [
  {
    words: ['migrate'],
    args: [],
    flags: [],
    usage: 'callctl migrate',
    summary: 'Apply database migrations (every command does this first)',
    run: async ({ migrations }) => ({ applied: migrations.applied, already_applied: migrations.alreadyApplied }),
  },
  {
    words: ['agency', 'create'],
    args: [],
    flags: ['name', 'plan'],
    required: ['name'],
    usage: 'callctl agency create --name <name> [--plan agency|starter]',
    summary: 'Create an agency (plan defaults to agency)',
    run: ({ prisma }, _args, values) => createAgency(prisma, { name: flag(values, 'name'), plan: values.plan }),
  },
  {
    words: ['agency', 'set-plan'],
    args: ['agency-id', 'plan'],
    flags: [],
    usage: 'callctl agency set-plan <agency-id> <plan>',
    summary: "Change an agency's plan; its clients inherit it",
    run: ({ prisma }, args) => setPlan(prisma, arg(args, 0), arg(args, 1)),
  },
  {
    words: ['client', 'create'],
    args: [],
    flags: ['agency', 'name'],
    required: ['agency', 'name'],
    usage: 'callctl client create --agency <agency-id> --name <name>',
    summary: 'Create a client of an agency',
    run: ({ prisma }, _args, values) => createClient(prisma, { agencyId: flag(values, 'agency'), name: flag(values, 'name') }),
  },
  {
    words: ['key', 'generate'],
    args: ['account-id'],
    flags: [],
    usage: 'callctl key generate <account-id>',
    summary: "Generate the account's API key, revoking the previous one",
    notice: 'This key is shown only once: store it now. The previous key of this account no longer works.',
    run: ({ prisma }, args) => generateKey(prisma, arg(args, 0)),
  },
  {
    words: ['api-access'],
    args: ['account-id', 'on|off'],
    flags: [],
    usage: 'callctl api-access <account-id> on|off',
    summary: 'Switch API access of an account (an agency switched off also switches off its clients)',
    check(args) {
      if (!ON_OFF.includes(arg(args, 1))) throw new UsageError(`Expected on or off, not "${arg(args, 1)}"`);
    },
    run: ({ prisma }, args) => setApiAccess(prisma, arg(args, 0), arg(args, 1) === 'on'),
  },
  {
    words: ['agent', 'create'],
    args: [],
    flags: ['account', 'name', 'phone', 'timezone', 'window', 'outside-window'],
    required: ['account', 'name'],
    usage:
      'callctl agent create --account <account-id> --name <name> [--phone <e164>] [--timezone <iana>]\n' +
      '                     [--window "mon-fri 09:00-17:00"]... [--outside-window queue|reject]',
    summary: 'Create an agent (no --window: always open)',
    run: ({ prisma }, _args, values) =>
      createAgent(prisma, {
        accountId: flag(values, 'account'),
        name: flag(values, 'name'),
        phone: values.phone,
        timezone: values.timezone,
        windows: values.window,
        outsideWindow: values['outside-window'],
      }),
  },
  {
    words: ['agent', 'set-default'],
    args: ['account-id', 'agent-id'],
    flags: [],
    usage: 'callctl agent set-default <account-id> <agent-id>',
    summary: 'Set the agent used when a trigger names none',
    run: ({ prisma }, args) => setDefaultAgent(prisma, arg(args, 0), arg(args, 1)),
  },
  {
    words: ['webhook', 'set'],
    args: ['account-id'],
    flags: ['url'],
    required: ['url'],
    usage: 'callctl webhook set <account-id> --url <url>',
    summary: "Set the account's webhook endpoint; returns a new signing secret",
    notice: 'This signing secret is shown only once: store it now.',
    run: ({ prisma, config }, args, values) =>
      setWebhook(prisma, arg(args, 0), flag(values, 'url'), { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS }),
  },
  {
    words: ['calls', 'list'],
    args: ['account-id'],
    flags: ['status'],
    usage: 'callctl calls list <account-id> [--status <status>]',
    summary: "An account's most recent calls (up to 100)",
    run: ({ prisma }, args, values) => listCalls(prisma, arg(args, 0), values.status),
  },
  {
    words: ['calls', 'show'],
    args: ['call-id'],
    flags: [],
    usage: 'callctl calls show <call-id>',
    summary: 'One call with its events and webhook deliveries',
    run: ({ prisma }, args) => showCall(prisma, arg(args, 0)),
  },
  {
    words: ['deliveries', 'replay'],
    args: ['delivery-id'],
    flags: [],
    usage: 'callctl deliveries replay <delivery-id>',
    summary: 'Send a webhook delivery again (same webhook-id)',
    run: ({ prisma }, args) => replayDelivery(prisma, arg(args, 0)),
  },
];

export const HELP_USAGE = 'callctl help | --help';
