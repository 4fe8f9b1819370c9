// The callctl command table: each command's words, arguments and flags, and the admin function it is a thin layer over.
import type { ParseArgsConfig } from 'node:util';
import { RETRY_WAIT_MAX_MINUTES, RETRY_WAITS_MAX, VOICEMAIL_NAME_PLACEHOLDER } from '../../schemas/agent-settings.js';
import { DEFAULT_RETRY_WAITS_MINUTES, MAX_ATTEMPTS, VOICEMAIL_MESSAGE_MAX } from '../../schemas/vocabulary.js';
import {
  createAgency,
  createClient,
  generateKey,
  isPlan,
  OPERATOR,
  setApiAccess,
  setPlan,
  unknownPlan,
} from '../admin/accounts.js';
import { cancelCall, isStatus, listCalls, showCall, unknownStatus } from '../admin/calls.js';
import { enableWebhook, replayDelivery, setWebhook, showWebhook } from '../admin/webhooks.js';
import type { Config } from '../config.js';
import type { Storage } from '../storage/index.js';
import type { MigrateResult } from '../storage/index.js';
import { AGENT_COMMANDS } from './agent-commands.js';
import { formatCall } from './call-output.js';
import { DNC_COMMANDS, DNC_FLAG_HELP } from './dnc-commands.js';
import { RETENTION_COMMANDS } from './retention-commands.js';
import { UsageError } from './usage-error.js';
import { USER_COMMANDS } from './user-commands.js';

export { UsageError };

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
  'window-timezone': { type: 'string' },
  'max-attempts': { type: 'string' },
  'retry-on': { type: 'string' },
  'retry-waits': { type: 'string' },
  voicemail: { type: 'string' },
  'voicemail-message': { type: 'string' },
  url: { type: 'string' },
  status: { type: 'string' },
  email: { type: 'string' },
  'agency-name': { type: 'string' },
  reason: { type: 'string' },
  'allow-existing-email': { type: 'boolean' },
  'skip-bad-rows': { type: 'boolean' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

export type FlagName = Exclude<keyof typeof OPTIONS, 'json' | 'help'>;

/** Each flag's value and meaning, for help. */
export const FLAG_HELP: Record<FlagName, { value: string; help: string }> = {
  name: { value: '<name>', help: 'A name for people' },
  plan: { value: 'agency|starter', help: 'agency (has API access) or starter; default agency' },
  agency: { value: '<agency-id>', help: "The agency's account id" },
  account: { value: '<account-id>', help: 'The account (agency or client) id' },
  phone: {
    value: '<e164>',
    help: "The agent's caller ID, E.164, e.g. +14155552671; none: no number (the agent cannot place calls)",
  },
  timezone: { value: '<iana>', help: "The agent's time zone, e.g. America/New_York; default UTC" },
  window: {
    value: '"<days> HH:MM-HH:MM"',
    help: 'A calling window (days: mon-fri, sat,sun, daily); repeat for more; none (or no --window): always open',
  },
  'outside-window': {
    value: 'queue|reject',
    help: 'Outside the windows: queue the call until one opens (default) or reject it',
  },
  'window-timezone': {
    value: 'agent|recipient',
    help:
      "Whose local time the windows are read in: agent (the agent's --timezone, default) or recipient (the " +
      "callee's: the trigger's recipient_timezone, else the number's country when it has one zone, else the agent's); " +
      'for calls triggered afterwards',
  },
  'max-attempts': {
    value: `1-${MAX_ATTEMPTS}`,
    help: 'How many times a call may be dialled in all; default 1 (no retry); more than 1 needs --retry-on',
  },
  'retry-on': {
    value: 'busy,no_answer,voicemail|none',
    help: 'The outcomes dialled again, comma-separated (never rejected); voicemail needs --voicemail; default none',
  },
  'retry-waits': {
    value: '<minutes,...>',
    help: `Minutes before attempt 2, 3, ...: 1 to ${RETRY_WAITS_MAX} whole numbers, each 1 to ${RETRY_WAIT_MAX_MINUTES} (7 days); the last repeats; default ${DEFAULT_RETRY_WAITS_MINUTES.join(',')}`,
  },
  voicemail: {
    value: 'off|hang_up|leave_message',
    help: 'When a machine answers: off (no detection, default), hang_up, or leave_message (needs --voicemail-message)',
  },
  'voicemail-message': {
    value: '<text>',
    help: `The message left on a machine, at most ${VOICEMAIL_MESSAGE_MAX} characters; ${VOICEMAIL_NAME_PLACEHOLDER} is the trigger's name; "" removes it`,
  },
  url: {
    value: '<url>',
    help: 'https URL of the endpoint (http and private addresses need WEBHOOK_ALLOW_PRIVATE_TARGETS=true)',
  },
  status: {
    value: '<status>',
    help: 'Only calls in this status: initiated, dialing, in_progress, completed or failed',
  },
  email: { value: '<email>', help: "The user's email address (compared case-insensitively)" },
  'agency-name': { value: '<name>', help: "The new agency's name" },
  'allow-existing-email': {
    value: '',
    help: 'Allow an email that already has a dashboard user in another account (signing in then asks which account)',
  },
  ...DNC_FLAG_HELP,
};

/** Flags every command takes. */
export const COMMON_FLAGS = [
  { flag: '--json', help: 'Print exactly one JSON object on stdout (errors: {"error": ...} on stderr)' },
  { flag: '-h, --help', help: 'Show this help' },
] as const;

/** The command groups (a command's first word) and what they are for. */
export const GROUPS: Record<string, string> = {
  migrate: 'Apply database migrations',
  agency: 'Create agencies and change their plan',
  client: 'Create clients of an agency',
  key: "Generate an account's API key",
  'api-access': "Switch an account's API access on or off",
  agent: 'Create and change agents (calling windows, retries, voicemail) and set the default agent',
  webhook: "Set, show and re-enable an account's webhook endpoint",
  calls: "List an account's calls; show one in full; cancel one that is still waiting",
  deliveries: 'Send a webhook delivery again',
  user: 'Create dashboard users (a one-time link sets the password), make new links, disable and enable them',
  setup: 'Create an agency and its first dashboard user in one step',
  retention: 'Delete the rows past their retention now (the servers do it every few minutes)',
  dnc: "Add, remove, list and import the numbers of an account's do-not-call list",
};

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
  'window-timezone'?: string;
  'max-attempts'?: string;
  'retry-on'?: string;
  'retry-waits'?: string;
  voicemail?: string;
  'voicemail-message'?: string;
  url?: string;
  status?: string;
  email?: string;
  'agency-name'?: string;
  reason?: string;
  'allow-existing-email'?: boolean;
  'skip-bad-rows'?: boolean;
}

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

// The arity checks in main.ts guarantee that every declared argument is present.
const arg = (args: string[], index: number): string => args[index] ?? '';
const flag = (values: Values, name: 'name' | 'agency' | 'account' | 'url'): string => values[name] ?? '';

const ON_OFF = ['on', 'off'];

/** A value the command line alone shows to be wrong: a usage error (exit 2), found before the database is opened. */
function usage(problem: string | null): void {
  if (problem) throw new UsageError(problem);
}

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
    check: (_args, values) =>
      usage(values.plan !== undefined && !isPlan(values.plan) ? unknownPlan(values.plan) : null),
    run: ({ storage }, _args, values) => createAgency(storage, { name: flag(values, 'name'), plan: values.plan }),
  },
  {
    words: ['agency', 'set-plan'],
    args: ['agency-id', 'plan'],
    flags: [],
    usage: 'callctl agency set-plan <agency-id> <plan>',
    summary: "Change an agency's plan; its clients inherit it",
    check: (args) => usage(isPlan(arg(args, 1)) ? null : unknownPlan(arg(args, 1))),
    run: ({ storage }, args) => setPlan(storage, arg(args, 0), arg(args, 1), OPERATOR),
  },
  {
    words: ['client', 'create'],
    args: [],
    flags: ['agency', 'name'],
    required: ['agency', 'name'],
    usage: 'callctl client create --agency <agency-id> --name <name>',
    summary: 'Create a client of an agency',
    run: ({ storage, now }, _args, values) =>
      createClient(
        storage,
        { agencyId: flag(values, 'agency'), name: flag(values, 'name'), now: now() },
        { kind: 'operator' },
      ),
  },
  {
    words: ['key', 'generate'],
    args: ['account-id'],
    flags: [],
    usage: 'callctl key generate <account-id>',
    summary: "Generate the account's API key, revoking the previous one",
    notice: 'This key is shown only once: store it now. The previous key of this account no longer works.',
    run: ({ storage, now }, args) => generateKey(storage, arg(args, 0), OPERATOR, { now: now() }),
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
    run: ({ storage, now }, args) => setApiAccess(storage, arg(args, 0), arg(args, 1) === 'on', OPERATOR, now()),
  },
  ...AGENT_COMMANDS,
  {
    words: ['webhook', 'set'],
    args: ['account-id'],
    flags: ['url'],
    required: ['url'],
    usage: 'callctl webhook set <account-id> --url <url>',
    summary: "Set the account's webhook endpoint; returns a new signing secret (a disabled endpoint stays disabled)",
    notice: (result, args) =>
      result.enabled === false
        ? `This signing secret is shown only once: store it now. The endpoint stays disabled: once the receiver uses this secret, callctl webhook enable ${arg(args, 0)} sends the events held meanwhile.`
        : 'This signing secret is shown only once: store it now.',
    run: ({ storage, config, now }, args, values) =>
      setWebhook(
        storage,
        arg(args, 0),
        flag(values, 'url'),
        { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS, now: now() },
        OPERATOR,
      ),
  },
  {
    words: ['webhook', 'show'],
    args: ['account-id'],
    flags: [],
    usage: 'callctl webhook show <account-id>',
    summary:
      "The account's endpoint: URL, enabled or why not, deliveries pending, held (since when) and failed (never the secret)",
    notice: (result, args) => {
      const webhook = result.webhook as { enabled: boolean; held: number; held_since: string | null } | null;
      if (!webhook) return `No endpoint: set one with callctl webhook set ${arg(args, 0)} --url <url>`;
      if (webhook.enabled) return undefined;
      const held =
        webhook.held > 0
          ? `, which sends the ${webhook.held === 1 ? 'event' : `${webhook.held} events`} held since ${webhook.held_since}`
          : '';
      return `Enable it again (same URL and secret) with callctl webhook enable ${arg(args, 0)}${held}`;
    },
    run: ({ storage }, args) => showWebhook(storage, arg(args, 0), OPERATOR),
  },
  {
    words: ['webhook', 'enable'],
    args: ['account-id'],
    flags: [],
    usage: 'callctl webhook enable <account-id>',
    summary:
      'Enable a disabled endpoint again (after a 410 Gone), keeping its URL and signing secret, and send the events held meanwhile',
    notice: (result) => {
      const released = result.released as number;
      const held = released === 1 ? '1 held event is' : `${released} held events are`;
      if (result.changed_at === null)
        return released > 0 ? `It was already enabled; ${held} sent now.` : 'It was already enabled: nothing changed.';
      return (
        `Enabled; the signing secret is unchanged. ${released > 0 ? `${held} being sent now.` : 'No events were held.'}` +
        ' Deliveries whose attempts had run out stay failed: callctl deliveries replay <delivery-id> sends one again.'
      );
    },
    run: ({ storage, now }, args) => enableWebhook(storage, arg(args, 0), OPERATOR, now()),
  },
  {
    words: ['calls', 'list'],
    args: ['account-id'],
    flags: ['status'],
    usage: 'callctl calls list <account-id> [--status <status>]',
    summary: "An account's most recent calls (up to 100)",
    check: (_args, values) =>
      usage(values.status !== undefined && !isStatus(values.status) ? unknownStatus(values.status) : null),
    run: ({ storage }, args, values) => listCalls(storage, arg(args, 0), values.status, OPERATOR),
  },
  {
    words: ['calls', 'show'],
    args: ['call-id'],
    flags: [],
    usage: 'callctl calls show <call-id>',
    summary: 'One call with its metadata, events, and webhook deliveries with every attempt',
    human: (result) => formatCall(result.call as Record<string, unknown>),
    run: ({ storage }, args) => showCall(storage, arg(args, 0), OPERATOR),
  },
  {
    words: ['calls', 'cancel'],
    args: ['call-id'],
    flags: [],
    usage: 'callctl calls cancel <call-id>',
    summary:
      'Cancel a call that is still waiting (status initiated): it ends failed with reason canceled and its call.failed event is sent; a call already dialling or ended is refused (exit 1)',
    notice: (result) =>
      result.already_canceled === true
        ? 'It was already canceled: nothing changed.'
        : 'Canceled: it will not be dialled; call.failed goes to the webhook endpoint.',
    run: ({ storage, now }, args) => cancelCall(storage, arg(args, 0), OPERATOR, now()),
  },
  {
    words: ['deliveries', 'replay'],
    args: ['delivery-id'],
    flags: [],
    usage: 'callctl deliveries replay <delivery-id>',
    summary: 'Send a webhook delivery again (same webhook-id)',
    run: ({ storage, now }, args) => replayDelivery(storage, arg(args, 0), OPERATOR, { now: now() }),
  },
  ...USER_COMMANDS,
  ...RETENTION_COMMANDS,
  ...DNC_COMMANDS,
];
