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
] as const satisfies readonly FlagName[];

/** `--window none` alone: no window; none beside a window is a mistake. */
function windowsOf(values: Values): string[] | undefined {
  const windows = values.window;
  if (windows === undefined || !windows.includes(NONE)) return windows;
  if (windows.length > 1) throw new UsageError('--window none (always open) cannot be given with other windows');
  return [];
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
  };
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
}

/** A value the command line alone shows to be wrong: a usage error (exit 2), found before the database is opened. */
function usage(problem: string | null): void {
  if (problem) throw new UsageError(problem);
}

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
      '                     [--voicemail off|hang_up|leave_message] [--voicemail-message <text>]',
    summary:
      "Create an agent (no --window: always open; defaults: one attempt, no voicemail detection, the agent's time zone)",
    examples: [
      `callctl agent create --account ${ACCOUNT} --name "Front desk" --phone +14155550100 --timezone America/New_York --window "mon-fri 09:00-17:00" --window "sat 10:00-14:00"`,
      `callctl agent create --account ${ACCOUNT} --name Sales --phone +14155550101 --max-attempts 3 --retry-on busy,no_answer,voicemail --retry-waits 30,120 --voicemail leave_message --voicemail-message "Hello {{name}}, we will call you again later." --window "mon-fri 09:00-20:00" --window-timezone recipient`,
    ],
    check: (_args, values) => usage(newAgentProblem(agentInputOf(values))),
    run: ({ storage, now }, _args, values) =>
      createAgent(
        storage,
        { ...agentInputOf(values), accountId: values.account ?? '', name: values.name ?? '', now: now() },
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
      '                     [--voicemail off|hang_up|leave_message] [--voicemail-message <text>]',
    summary:
      'Change the options given of an agent, keeping the others (--window replaces all its windows); audited. ' +
      'Calls waiting for its old windows are placed by the new ones; past calls keep their agent and caller ID',
    examples: [
      `callctl agent update ${AGENT} --max-attempts 3 --retry-on busy,no_answer`,
      `callctl agent update ${AGENT} --voicemail hang_up --retry-on busy,no_answer,voicemail --retry-waits 60`,
      `callctl agent update ${AGENT} --window "mon-fri 08:00-18:00" --window-timezone recipient`,
      `callctl agent update ${AGENT} --name "Front desk (night)" --phone none --window none --max-attempts 1`,
    ],
    notice: (result) =>
      (result.changed as string[]).length === 0 ? 'Nothing changed: the agent already had these settings.' : undefined,
    check(_args, values) {
      const input = agentInputOf(values);
      if (Object.keys(input).length === 0)
        throw new UsageError(`Nothing to change: give at least one of ${AGENT_FLAGS.map((f) => `--${f}`).join(', ')}`);
      usage(agentInputProblem(input));
    },
    run: ({ storage, now }, args, values) =>
      updateAgent(storage, args[0] ?? '', { ...agentInputOf(values), now: now() }, OPERATOR),
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
