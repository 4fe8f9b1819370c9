// callctl's agent commands: create an agent, change any of its fields (`agent update` changes only the options
// given), set an account's default agent, and archive or restore an agent. Every value the command line alone shows to be wrong is a usage error
// (exit 2), in the words the dashboard gives the same field; a refusal that needs the database (no such agent, a
// setting that contradicts the agent's stored ones) exits 1.
import { OPERATOR } from '../admin/accounts.js';
import {
  agentInputProblem,
  createAgent,
  newAgentProblem,
  setAgentArchived,
  setDefaultAgent,
  updateAgent,
  type AgentInput,
} from '../admin/agents.js';
import type { Command } from './command-types.js';
import type { FlagName, Values } from './flags.js';
import { UsageError } from './usage-error.js';

/** The word that removes a phone number or every window (an agent without windows is always open). */
const NONE = 'none';

const AGENT_FLAGS = [
  'name',
  'phone',
  'timezone',
  'window',
  'outside-window',
  'window-timezone',
  'max-attempts',
  'retry-on',
  'retry-waits',
  'voicemail',
  'voicemail-message',
  'consent-required',
  'handoff',
  'stream-url',
  'stream-param',
  'sip-uri',
  'sip-header',
] as const satisfies readonly FlagName[];

/** The word that sets the stream back to the service's AGENT_STREAM_URL. */
const DEFAULT = 'default';

/** `--window none` alone: no window; none beside a window is a mistake. */
function windowsOf(values: Values): string[] | undefined {
  const windows = values.window;
  if (windows === undefined || !windows.includes(NONE)) return windows;
  if (windows.length > 1) throw new UsageError('--window none (always open) cannot be given with other windows');
  return [];
}

/** A repeatable list (--stream-param, --sip-header): none alone clears it; none beside an item is a mistake. */
function pairsOf(values: Values, flag: 'stream-param' | 'sip-header'): string[] | undefined {
  const items = values[flag];
  if (items === undefined || !items.includes(NONE)) return items;
  if (items.length > 1) throw new UsageError(`--${flag} none (no ${flag.slice(0, -1)}s) cannot be given with others`);
  return [];
}

/**
 * The hand-off the options choose: --handoff, else the kind whose address is given (--stream-url <url>: stream,
 * --sip-uri <uri>: sip; "default" and "none" choose nothing); both addresses without --handoff is a usage error.
 */
function handoffOf(values: Values): string | undefined {
  if (values.handoff !== undefined) return values.handoff;
  const stream = values['stream-url'] !== undefined && values['stream-url'] !== DEFAULT;
  const sip = values['sip-uri'] !== undefined && values['sip-uri'] !== NONE;
  if (stream && sip)
    throw new UsageError(
      'Both --stream-url and --sip-uri given: say which one the agent uses with --handoff stream|sip',
    );
  return stream ? 'stream' : sip ? 'sip' : undefined;
}

/** The agent's fields the options give, in src/admin's terms (an option not given is left out). */
function agentInputOf(values: Values): AgentInput {
  const phone = values.phone === NONE ? null : values.phone;
  const input: AgentInput = {
    name: values.name,
    phone,
    timezone: values.timezone,
    windows: windowsOf(values),
    outsideWindow: values['outside-window'],
    windowTimezone: values['window-timezone'],
    maxAttempts: values['max-attempts'],
    retryOn: values['retry-on'],
    retryWaits: values['retry-waits'],
    voicemail: values.voicemail,
    voicemailMessage: values['voicemail-message'],
    consentRequired: values['consent-required'],
    handoff: handoffOf(values),
    streamUrl: values['stream-url'] === DEFAULT ? null : values['stream-url'],
    streamParameters: pairsOf(values, 'stream-param'),
    sipUri: values['sip-uri'] === NONE ? null : values['sip-uri'],
    sipHeaders: pairsOf(values, 'sip-header'),
  };
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
}

/** A value the command line alone shows to be wrong: a usage error (exit 2), found before the database is opened. */
function usage(problem: string | null): void {
  if (problem) throw new UsageError(problem);
}

/**
 * Whether an address may be on a private network is the configuration's (WEBHOOK_ALLOW_PRIVATE_TARGETS), read when
 * the command runs: the usage check judges the rest, and a local host is refused then (exit 1).
 */
const TEXT_ONLY = { allowPrivateTargets: true };

const ACCOUNT = '449368cd-29ab-43cc-bc14-a79411dea4bf';
const AGENT = '1cdf1ffb-3133-4b0b-86b0-20eaddfa019f';

export const AGENT_COMMANDS: Command[] = [
  {
    words: ['agent', 'create'],
    args: [],
    flags: ['account', ...AGENT_FLAGS],
    required: ['account', 'name'],
    usage:
      'callctl agent create --account <account-id> --name <name> [--phone <e164>] [--timezone <iana>]\n' +
      '                     [--window "mon-fri 09:00-17:00"]... [--outside-window queue|reject]\n' +
      '                     [--window-timezone agent|recipient] [--max-attempts 1-5]\n' +
      '                     [--retry-on busy,no_answer,voicemail] [--retry-waits 30,120,1440]\n' +
      '                     [--voicemail off|hang_up|leave_message] [--voicemail-message <text>]\n' +
      '                     [--consent-required on|off]\n' +
      '                     [--handoff stream|sip] [--stream-url <wss-url>] [--stream-param <name>=<value>]...\n' +
      '                     [--sip-uri <sip-uri>] [--sip-header X-<Name>=<value>]...',
    summary:
      "Create an agent (no --window: always open; defaults: one attempt, no voicemail detection, the agent's time zone, " +
      "calls handed to the service's AGENT_STREAM_URL)",
    examples: [
      `callctl agent create --account ${ACCOUNT} --name "Front desk" --phone +14155550100 --timezone America/New_York --window "mon-fri 09:00-17:00" --window "sat 10:00-14:00"`,
      `callctl agent create --account ${ACCOUNT} --name "Pipecat bot" --phone +14155550102 --stream-url wss://bots.example.com/twilio --stream-param bot=sales --stream-param language=en`,
      `callctl agent create --account ${ACCOUNT} --name Sales --phone +14155550101 --max-attempts 3 --retry-on busy,no_answer,voicemail --retry-waits 30,120 --voicemail leave_message --voicemail-message "Hello {{name}}, we will call you again later." --window "mon-fri 09:00-20:00" --window-timezone recipient`,
    ],
    check: (_args, values) => usage(newAgentProblem({ ...agentInputOf(values), ...TEXT_ONLY })),
    run: ({ storage, config, now }, _args, values) =>
      createAgent(
        storage,
        {
          ...agentInputOf(values),
          allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
          accountId: values.account ?? '',
          name: values.name ?? '',
          now: now(),
        },
        OPERATOR,
      ),
  },
  {
    words: ['agent', 'update'],
    args: ['agent-id'],
    flags: [...AGENT_FLAGS],
    usage:
      'callctl agent update <agent-id> [--name <name>] [--phone <e164>|none] [--timezone <iana>]\n' +
      '                     [--window "mon-fri 09:00-17:00"]...|--window none [--outside-window queue|reject]\n' +
      '                     [--window-timezone agent|recipient] [--max-attempts 1-5]\n' +
      '                     [--retry-on busy,no_answer,voicemail|none] [--retry-waits 30,120,1440]\n' +
      '                     [--voicemail off|hang_up|leave_message] [--voicemail-message <text>]\n' +
      '                     [--consent-required on|off]\n' +
      '                     [--handoff stream|sip] [--stream-url <wss-url>|default] [--stream-param <name>=<value>|none]...\n' +
      '                     [--sip-uri <sip-uri>|none] [--sip-header X-<Name>=<value>|none]...',
    summary:
      'Change the options given of an agent, keeping the others (--window, --stream-param and --sip-header replace all ' +
      'theirs; --stream-url <url> or --sip-uri <uri> also switches the hand-off to that kind); audited. ' +
      'Calls waiting for its old windows are placed by the new ones; past calls keep their agent and caller ID',
    examples: [
      `callctl agent update ${AGENT} --max-attempts 3 --retry-on busy,no_answer`,
      `callctl agent update ${AGENT} --voicemail hang_up --retry-on busy,no_answer,voicemail --retry-waits 60`,
      `callctl agent update ${AGENT} --window "mon-fri 08:00-18:00" --window-timezone recipient`,
      `callctl agent update ${AGENT} --consent-required on`,
      `callctl agent update ${AGENT} --sip-uri "sip:front-desk@sip.example.com;transport=tls" --sip-header X-Bot=front-desk`,
      `callctl agent update ${AGENT} --handoff stream --stream-url default --stream-param none`,
      `callctl agent update ${AGENT} --name "Front desk (night)" --phone none --window none --max-attempts 1`,
    ],
    notice: (result) =>
      (result.changed as string[]).length === 0 ? 'Nothing changed: the agent already had these settings.' : undefined,
    check(_args, values) {
      const input = agentInputOf(values);
      if (Object.keys(input).length === 0)
        throw new UsageError(`Nothing to change: give at least one of ${AGENT_FLAGS.map((f) => `--${f}`).join(', ')}`);
      usage(agentInputProblem({ ...input, ...TEXT_ONLY }));
    },
    run: ({ storage, config, now }, args, values) =>
      updateAgent(
        storage,
        args[0] ?? '',
        { ...agentInputOf(values), allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS, now: now() },
        OPERATOR,
      ),
  },
  {
    words: ['agent', 'set-default'],
    args: ['account-id', 'agent-id'],
    flags: [],
    usage: 'callctl agent set-default <account-id> <agent-id>',
    summary: "Set the agent used when a trigger names none: one of the account's own agents (not a client's)",
    run: async ({ storage, now }, args) => {
      const { accountId, agent } = await setDefaultAgent(storage, args[0] ?? '', args[1] ?? '', OPERATOR, now());
      return { account_id: accountId, default_agent_id: agent.id };
    },
  },
  {
    words: ['agent', 'archive'],
    args: ['agent-id'],
    flags: [],
    usage: 'callctl agent archive <agent-id>',
    summary:
      'Archive an agent: new triggers naming it get 400 "Agent not found"; its calls keep it. The default agent of ' +
      'an account is refused (set another default first); audited',
    notice: (result) => (result.changed ? undefined : 'Nothing changed: the agent was already archived.'),
    run: async ({ storage, now }, args) => {
      const result = await setAgentArchived(storage, args[0] ?? '', true, OPERATOR, now());
      return { agent_id: result.id, archived: result.archived, changed: result.changed };
    },
  },
  {
    words: ['agent', 'restore'],
    args: ['agent-id'],
    flags: [],
    usage: 'callctl agent restore <agent-id>',
    summary: 'Restore an archived agent: new triggers may use it again; audited',
    notice: (result) => (result.changed ? undefined : 'Nothing changed: the agent was not archived.'),
    run: async ({ storage, now }, args) => {
      const result = await setAgentArchived(storage, args[0] ?? '', false, OPERATOR, now());
      return { agent_id: result.id, archived: result.archived, changed: result.changed };
    },
  },
];
