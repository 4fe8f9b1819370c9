// callctl's flags: the one option set parseArgs reads, each flag's help, and the values it parses.
import type { ParseArgsConfig } from 'node:util';
import { RETRY_WAIT_MAX_MINUTES, RETRY_WAITS_MAX, VOICEMAIL_NAME_PLACEHOLDER } from '../../schemas/agent-settings.js';
import { HANDOFF_STATIC_MAX, HANDOFF_URI_MAX, HANDOFF_VALUE_MAX } from '../../schemas/agent-runtime.js';
import { DEFAULT_RETRY_WAITS_MINUTES, MAX_ATTEMPTS, VOICEMAIL_MESSAGE_MAX } from '../../schemas/vocabulary.js';
import { CARRIER_FLAG_HELP } from './carrier-commands.js';
import { DNC_FLAG_HELP } from './dnc-commands.js';
import { EXPORT_FLAG_HELP } from './export-commands.js';
import { RULES_FLAG_HELP } from './rules-commands.js';

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
  'consent-required': { type: 'string' },
  handoff: { type: 'string' },
  'stream-url': { type: 'string' },
  'stream-param': { type: 'string', multiple: true },
  'sip-uri': { type: 'string' },
  'sip-header': { type: 'string', multiple: true },
  url: { type: 'string' },
  status: { type: 'string' },
  email: { type: 'string' },
  'agency-name': { type: 'string' },
  reason: { type: 'string' },
  'allow-existing-email': { type: 'boolean' },
  role: { type: 'string' },
  'skip-bad-rows': { type: 'boolean' },
  on: { type: 'boolean' },
  off: { type: 'boolean' },
  'rule-sets': { type: 'string' },
  hours: { type: 'string', multiple: true },
  kinds: { type: 'string' },
  cap: { type: 'string' },
  'cap-7d': { type: 'string' },
  'cap-scope': { type: 'string' },
  days: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  replace: { type: 'boolean' },
  out: { type: 'string' },
  provider: { type: 'string' },
  'account-sid': { type: 'string' },
  'auth-token': { type: 'string' },
  'api-key': { type: 'string' },
  'connection-id': { type: 'string' },
  'public-key': { type: 'string' },
  'space-url': { type: 'string' },
  'project-id': { type: 'string' },
  token: { type: 'string' },
  'signing-key': { type: 'string' },
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
  handoff: {
    value: 'stream|sip',
    help:
      'How an answered call reaches the voice-agent runtime: a media stream (default) or a SIP destination; the ' +
      "other kind's settings are kept, unused. Without it, --stream-url <url> chooses stream and --sip-uri sip",
  },
  'stream-url': {
    value: '<wss-url>|default',
    help: `The stream's wss:// address, at most ${HANDOFF_URI_MAX} characters, no user name or password; a private or local host needs WEBHOOK_ALLOW_PRIVATE_TARGETS=true; default: the service's AGENT_STREAM_URL`,
  },
  'stream-param': {
    value: '<name>=<value>',
    help: `A static stream parameter: name of 1 to 40 letters, digits or underscores, none the hand-off sends itself (call_id, agent_id, ...); value at most ${HANDOFF_VALUE_MAX} characters; repeat for more, at most ${HANDOFF_STATIC_MAX}; replaces them all; none: no parameter`,
  },
  'sip-uri': {
    value: '<sip-uri>|none',
    help: `The SIP destination, sip:user@host[:port][;params] or sips:, at most ${HANDOFF_URI_MAX} characters, no ?headers; a private or local host needs WEBHOOK_ALLOW_PRIVATE_TARGETS=true; none: no destination`,
  },
  'sip-header': {
    value: 'X-<Name>=<value>',
    help: `A static SIP header: X- and 1 to 38 letters, digits or hyphens, none the hand-off sends itself (X-Call-Id, ...); value at most ${HANDOFF_VALUE_MAX} characters; repeat for more, at most ${HANDOFF_STATIC_MAX}; replaces them all; none: no header`,
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
  role: { value: 'owner|admin|member|viewer', help: "The user's role in their account (user create: default owner)" },
  ...DNC_FLAG_HELP,
  ...RULES_FLAG_HELP,
  ...EXPORT_FLAG_HELP,
  ...CARRIER_FLAG_HELP,
  // Two commands take each of these: one help line names both.
  'consent-required': {
    value: 'on|off',
    help:
      'agent: on: every trigger for the agent must carry `consent` (else 400 "Consent is required for this agent"), ' +
      "off (default): only when the agency's calling rules require it; rules set: every trigger of the agency needs it",
  },
  from: { value: 'HH:MM|YYYY-MM-DD', help: `${RULES_FLAG_HELP.from.help}; ${EXPORT_FLAG_HELP.from.help}` },
  to: { value: 'HH:MM|YYYY-MM-DD', help: `${RULES_FLAG_HELP.to.help}; ${EXPORT_FLAG_HELP.to.help}` },
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
  'consent-required'?: string;
  handoff?: string;
  'stream-url'?: string;
  'stream-param'?: string[];
  'sip-uri'?: string;
  'sip-header'?: string[];
  url?: string;
  status?: string;
  email?: string;
  'agency-name'?: string;
  reason?: string;
  'allow-existing-email'?: boolean;
  role?: string;
  'skip-bad-rows'?: boolean;
  on?: boolean;
  off?: boolean;
  'rule-sets'?: string;
  hours?: string[];
  kinds?: string;
  cap?: string;
  'cap-7d'?: string;
  'cap-scope'?: string;
  days?: string;
  from?: string;
  to?: string;
  replace?: boolean;
  out?: string;
  provider?: string;
  'account-sid'?: string;
  'auth-token'?: string;
  'api-key'?: string;
  'connection-id'?: string;
  'public-key'?: string;
  'space-url'?: string;
  'project-id'?: string;
  token?: string;
  'signing-key'?: string;
}
