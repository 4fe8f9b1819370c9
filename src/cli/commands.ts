// The callctl command table: each command's words, arguments and flags, and the admin function it is a thin layer over.
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
import { AGENT_COMMANDS } from './agent-commands.js';
import { formatCall, withResult } from './call-output.js';
import { CARRIER_COMMANDS } from './carrier-commands.js';
import type { Command } from './command-types.js';
import { DNC_COMMANDS } from './dnc-commands.js';
import { EXPORT_COMMANDS } from './export-commands.js';
import type { Values } from './flags.js';
import { RETENTION_COMMANDS } from './retention-commands.js';
import { RULES_COMMANDS } from './rules-commands.js';
import { SECRETS_COMMANDS } from './secrets-commands.js';
import { UsageError } from './usage-error.js';
import { USER_COMMANDS } from './user-commands.js';

export { UsageError };

/** The command groups (a command's first word) and what they are for. */
export const GROUPS: Record<string, string> = {
  migrate: 'Apply database migrations',
  agency: 'Create agencies and change their plan',
  client: 'Create clients of an agency',
  key: "Generate an account's API key",
  'api-access': "Switch an account's API access on or off",
  agent: 'Create and change agents (calling windows, retries, voicemail) and set the default agent',
  webhook: "Set, show and re-enable an account's webhook endpoint",
  calls:
    "List an account's calls; show one in full; cancel one that is still waiting; export a period's calls with their consent",
  deliveries: 'Send a webhook delivery again',
  user: 'Create dashboard users (a one-time link sets the password), give roles, make new links, disable and enable them',
  setup: 'Create an agency and its first dashboard user in one step',
  retention: 'Delete the rows past their retention now (the servers do it every few minutes)',
  dnc: "Add, remove, list and import the numbers of an account's do-not-call list",
  rules:
    "Show and change an account's calling rules (an agency's: on or off, laws, caps per number, consent; an agency's or a client's own hours)",
  carrier:
    "Show, set and remove an account's own carrier (Twilio, Telnyx, SignalWire; credentials checked and never shown again); let an agency's clients choose theirs",
  secrets: 'Re-wrap the secrets stored in the database under the current SECRETS_KEY (a key rotation)',
};

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
    run: async ({ migrations, sealedSecrets }) => ({
      applied: migrations.applied,
      already_applied: migrations.alreadyApplied,
      secrets_sealed: sealedSecrets,
    }),
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
    summary:
      "One call with its metadata, the agent's runtime's result, events, and webhook deliveries with every attempt",
    human: (result) => formatCall(result.call as Record<string, unknown>),
    run: async ({ storage }, args) => withResult(storage, await showCall(storage, arg(args, 0), OPERATOR)),
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
  ...EXPORT_COMMANDS,
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
  ...RULES_COMMANDS,
  ...CARRIER_COMMANDS,
  ...SECRETS_COMMANDS,
];
