// callctl's flags: the one option set parseArgs reads, each flag's help, and the values it parses.
import type { ParseArgsConfig } from 'node:util';
import { RETRY_WAIT_MAX_MINUTES, RETRY_WAITS_MAX, VOICEMAIL_NAME_PLACEHOLDER } from '../../schemas/agent-settings.js';
import { DEFAULT_RETRY_WAITS_MINUTES, MAX_ATTEMPTS, VOICEMAIL_MESSAGE_MAX } from '../../schemas/vocabulary.js';
import { DNC_FLAG_HELP } from './dnc-commands.js';

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
