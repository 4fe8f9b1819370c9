// callctl's carrier commands (PRODUCT.md, "Placing calls"): show an account's carrier, set its own (the credentials
// checked at the carrier, stored sealed, never printed again), remove it, and an agency's switch letting its clients
// choose their own. Thin over src/admin/carriers.ts, audited as the operator's. A secret flag given as `-` is read from
// stdin, so that it stays out of the shell's history and of `ps`.
import {
  removeCarrier,
  setCarrier,
  setClientsChooseCarrier,
  showCarrier,
  type CarrierView,
} from '../admin/carriers.js';
import { OPERATOR } from '../admin/accounts.js';
import { AdminError } from '../admin/errors.js';
import { CARRIER_PROVIDERS } from '../../schemas/carrier.js';
import { carrierApiAddresses, carrierSetRefusal, environmentCarrier } from '../config-carriers.js';
import { checkCarrierAccount } from '../dispatch/carrier-accounts.js';
import type { Command, Context, Result } from './command-types.js';
import type { FlagName, Values } from './flags.js';
import { UsageError } from './usage-error.js';

const arg = (args: string[], index: number): string => args[index] ?? '';

/** Each credential flag and the credential it gives (schemas/carrier.ts); the secret ones may be `-` (stdin). */
const CREDENTIAL_FLAGS = [
  { flag: 'account-sid', name: 'account_sid', secret: false },
  { flag: 'auth-token', name: 'auth_token', secret: true },
  { flag: 'api-key', name: 'api_key', secret: true },
  { flag: 'connection-id', name: 'connection_id', secret: false },
  { flag: 'public-key', name: 'public_key', secret: false },
  { flag: 'space-url', name: 'space_url', secret: false },
  { flag: 'project-id', name: 'project_id', secret: false },
  { flag: 'token', name: 'token', secret: true },
  { flag: 'signing-key', name: 'signing_key', secret: true },
] as const satisfies readonly { flag: FlagName; name: string; secret: boolean }[];

export const CARRIER_FLAG_HELP = {
  provider: { value: 'twilio|telnyx|signalwire', help: 'The carrier whose credentials follow' },
  'account-sid': { value: '<AC...>', help: 'twilio: the Account SID (AC and 32 hex digits)' },
  'auth-token': { value: '<token>|-', help: 'twilio: the auth token (secret; - reads it from stdin)' },
  'api-key': { value: '<key>|-', help: 'telnyx: the API key, v2 (secret; - reads it from stdin)' },
  'connection-id': { value: '<id>', help: 'telnyx: the Call Control application (connection) id calls are placed on' },
  'public-key': { value: '<base64>', help: "telnyx: the account's public key for webhook signatures (portal: Keys)" },
  'space-url': { value: '<https-url>', help: "signalwire: the space's address, https://<space>.signalwire.com" },
  'project-id': { value: '<uuid>', help: 'signalwire: the project ID' },
  token: { value: '<token>|-', help: 'signalwire: the API token (secret; - reads it from stdin)' },
  'signing-key': { value: '<key>|-', help: 'signalwire: the signing key (secret; - reads it from stdin)' },
} satisfies Partial<Record<FlagName, { value: string; help: string }>>;

/** The credentials given on the command line; each secret given as `-` is the next line of stdin, in flag order. */
async function credentialsOf(values: Values, stdin: () => Promise<string>): Promise<Record<string, string>> {
  const fromStdin = CREDENTIAL_FLAGS.filter(({ flag, secret }) => secret && values[flag] === '-');
  const lines = fromStdin.length > 0 ? (await stdin()).split(/\r?\n/) : [];
  const credentials: Record<string, string> = {};
  for (const { flag, name } of CREDENTIAL_FLAGS) {
    const value = values[flag];
    if (value === undefined) continue;
    if (value !== '-' || !fromStdin.some((f) => f.flag === flag)) {
      credentials[name] = value;
      continue;
    }
    const line = lines[fromStdin.findIndex((f) => f.flag === flag)]?.trim() ?? '';
    if (line === '')
      throw new UsageError(
        `--${flag} -: stdin has no line for it (give the secrets given as -, one a line, in the order ${fromStdin.map((f) => `--${f.flag}`).join(', ')})`,
      );
    credentials[name] = line;
  }
  return credentials;
}

/** What callctl prints of a carrier: nothing secret (the view has none), and no dashboard-only field. */
function printed(view: CarrierView): Result {
  const carrier: Partial<CarrierView> = { ...view };
  delete carrier.editable;
  return { carrier };
}

function carrierNotice(result: Result): string | undefined {
  const carrier = result.carrier as Omit<CarrierView, 'editable'>;
  const notes: string[] = [];
  if (carrier.source === 'environment')
    notes.push("This account has no carrier of its own: its calls go through the service's default (DIALER).");
  else if (carrier.numbers === null)
    notes.push("The carrier does not list numbers: agents' caller IDs are not checked against it.");
  return notes.join('\n') || undefined;
}

const environmentOf = (ctx: Context) => environmentCarrier(ctx.config);

export const CARRIER_COMMANDS: Command[] = [
  {
    words: ['carrier', 'show'],
    args: ['account-id'],
    flags: [],
    usage: 'callctl carrier show <account-id>',
    summary:
      "The carrier the account's calls go through: its own, its agency's or the service's default, with its numbers (never a secret)",
    notice: carrierNotice,
    run: async (ctx, args) => printed(await showCarrier(ctx.storage, arg(args, 0), OPERATOR, environmentOf(ctx))),
  },
  {
    words: ['carrier', 'set'],
    args: ['account-id'],
    flags: ['provider', ...CREDENTIAL_FLAGS.map((c) => c.flag)],
    required: ['provider'],
    usage:
      'callctl carrier set <account-id> --provider twilio|telnyx|signalwire\n' +
      '    twilio: --account-sid <AC...> --auth-token <token>|-\n' +
      '    telnyx: --api-key <key>|- --connection-id <id> --public-key <base64>\n' +
      '    signalwire: --space-url <url> --project-id <uuid> --token <token>|- --signing-key <key>|-',
    summary:
      "Set the account's own carrier: the credentials are checked at the carrier (a harmless read, and its numbers), stored sealed, audited, never shown again; a secret given as - is read from stdin (one a line)",
    examples: [
      'printf \'%s\\n\' "$TWILIO_AUTH_TOKEN" | callctl carrier set <account-id> --provider twilio --account-sid AC0123456789abcdef0123456789abcdef --auth-token -',
    ],
    check: (_args, values) => {
      const provider = values.provider ?? '';
      if (!(CARRIER_PROVIDERS as readonly string[]).includes(provider))
        throw new UsageError(`Unknown carrier "${provider}": expected ${CARRIER_PROVIDERS.join(', ')}`);
    },
    notice: (result) => {
      const carrier = result.carrier as Omit<CarrierView, 'editable'>;
      const lines = [`The credentials are stored sealed and are never shown again.`];
      if (carrier.source !== 'account')
        lines.push(
          `Not in use yet: the agency does not let its clients choose their carrier (callctl carrier clients-choose <agency-id> on); calls go through ${carrier.source === 'agency' ? "the agency's" : "the service's default"}.`,
        );
      else if (carrier.numbers === null)
        lines.push("The carrier does not list numbers: agents' caller IDs are not checked against it.");
      return lines.join('\n');
    },
    run: async (ctx, args, values) => {
      const refusal = carrierSetRefusal(ctx.config);
      if (refusal) throw new AdminError(refusal);
      const credentials = await credentialsOf(values, ctx.stdin);
      const addresses = carrierApiAddresses(ctx.config);
      const view = await setCarrier(
        ctx.storage,
        arg(args, 0),
        { provider: values.provider ?? '', credentials },
        OPERATOR,
        (carrier) => checkCarrierAccount(carrier, addresses),
        ctx.now(),
      );
      return printed(view);
    },
  },
  {
    words: ['carrier', 'remove'],
    args: ['account-id'],
    flags: [],
    usage: 'callctl carrier remove <account-id>',
    summary: "Remove the account's own carrier: its calls then go through its agency's, or the service's default",
    notice: (result) => (result.removed === true ? undefined : 'It had no carrier of its own: nothing changed.'),
    run: async (ctx, args) => {
      const removed = await removeCarrier(ctx.storage, arg(args, 0), OPERATOR, ctx.now());
      return {
        removed,
        ...printed(await showCarrier(ctx.storage, arg(args, 0), OPERATOR, environmentOf(ctx))),
      };
    },
  },
  {
    words: ['carrier', 'clients-choose'],
    args: ['agency-id', 'on|off'],
    flags: [],
    usage: 'callctl carrier clients-choose <agency-id> on|off',
    summary:
      "Let an agency's clients set a carrier of their own (on), or have every client's calls go through the agency's (off)",
    check(args) {
      if (!['on', 'off'].includes(arg(args, 1))) throw new UsageError(`Expected on or off, not "${arg(args, 1)}"`);
    },
    run: async (ctx, args) => {
      const allowed = arg(args, 1) === 'on';
      await setClientsChooseCarrier(ctx.storage, arg(args, 0), allowed, OPERATOR, ctx.now());
      return { agency_id: arg(args, 0), clients_choose_carrier: allowed };
    },
  },
];
