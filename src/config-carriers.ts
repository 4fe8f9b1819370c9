// The carrier settings of the environment (PRODUCT.md, "Configuration"): DIALER, the default carrier of every account
// without its own, and each carrier's credentials and API address; which of them each DIALER needs. Spread into
// src/config.ts's schema and checked by its loadConfig; and what callctl and the dashboard make of them when an
// account's own carrier is shown or set.
import { Type } from '@sinclair/typebox';
import type { EnvironmentCarrier } from './admin/carriers.js';
import type { CarrierApiAddresses } from './dispatch/carrier-accounts.js';

const Url = (description: string) => Type.Optional(Type.String({ minLength: 1, description }));

export const CARRIER_SETTINGS = {
  DIALER: Type.Union(
    [Type.Literal('simulated'), Type.Literal('twilio'), Type.Literal('telnyx'), Type.Literal('signalwire')],
    {
      default: 'simulated',
      description: 'simulated | twilio | telnyx | signalwire',
    },
  ),
  TWILIO_ACCOUNT_SID: Type.Optional(Type.String({ pattern: '^AC[0-9a-fA-F]{32}$', description: 'Twilio account SID' })),
  TWILIO_AUTH_TOKEN: Type.Optional(Type.String({ minLength: 1, description: 'Twilio auth token' })),
  TWILIO_API_BASE_URL: Type.String({
    default: 'https://api.twilio.com',
    description: "Twilio's REST API (overridden in tests)",
  }),
  TELNYX_API_KEY: Type.Optional(Type.String({ minLength: 1, description: 'Telnyx API key (Call Control v2)' })),
  TELNYX_PUBLIC_KEY: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9+/]{43}=$',
      description: "Telnyx's public key for webhook signatures: base64 of 32 bytes of ed25519, as the portal shows it",
    }),
  ),
  TELNYX_CONNECTION_ID: Type.Optional(
    Type.String({ minLength: 1, description: 'The Telnyx Call Control application the calls are placed from' }),
  ),
  TELNYX_API_BASE_URL: Type.String({
    default: 'https://api.telnyx.com',
    description: "Telnyx's REST API (overridden in tests)",
  }),
  SIGNALWIRE_SPACE_URL: Url('SignalWire space, https://<space>.signalwire.com'),
  SIGNALWIRE_PROJECT_ID: Type.Optional(
    Type.String({
      pattern: '^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$',
      description: 'SignalWire project ID',
    }),
  ),
  SIGNALWIRE_TOKEN: Type.Optional(Type.String({ minLength: 1, description: 'SignalWire API token' })),
  SIGNALWIRE_SIGNING_KEY: Type.Optional(Type.String({ minLength: 1, description: 'SignalWire signing key' })),
  SIGNALWIRE_API_BASE_URL: Url("SignalWire's REST API instead of the space (overridden in tests)"),
};

type CarrierSettings = { DIALER: 'simulated' | 'twilio' | 'telnyx' | 'signalwire' } & Partial<
  Record<(typeof DIALER_NEEDS)[keyof typeof DIALER_NEEDS][number] | 'PUBLIC_BASE_URL' | 'AGENT_STREAM_URL', string>
>;

/** What each DIALER needs besides PUBLIC_BASE_URL and AGENT_STREAM_URL (which every real carrier needs). */
const DIALER_NEEDS = {
  simulated: [],
  twilio: ['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN'],
  telnyx: ['TELNYX_API_KEY', 'TELNYX_PUBLIC_KEY', 'TELNYX_CONNECTION_ID'],
  signalwire: ['SIGNALWIRE_SPACE_URL', 'SIGNALWIRE_PROJECT_ID', 'SIGNALWIRE_TOKEN', 'SIGNALWIRE_SIGNING_KEY'],
} as const;

/** The carrier settings' problems, each naming its variable. */
export function carrierProblems(config: CarrierSettings & { SIGNALWIRE_SPACE_URL?: string | undefined }): string[] {
  const problems: string[] = [];
  if (config.DIALER !== 'simulated')
    for (const name of [...DIALER_NEEDS[config.DIALER], 'PUBLIC_BASE_URL', 'AGENT_STREAM_URL'] as const)
      if (!config[name]) problems.push(`${name}: is required when DIALER=${config.DIALER}`);
  if (config.SIGNALWIRE_SPACE_URL && !/^https:\/\/[a-z0-9-]+\.signalwire\.com\/?$/i.test(config.SIGNALWIRE_SPACE_URL))
    problems.push("SIGNALWIRE_SPACE_URL: must be the space's address, https://<space>.signalwire.com");
  return problems;
}

type CarrierConfig = CarrierSettings & {
  TWILIO_API_BASE_URL: string;
  TELNYX_API_BASE_URL: string;
  SIGNALWIRE_API_BASE_URL?: string | undefined;
};

/**
 * The environment's carrier as callctl and the dashboard show it (src/admin/carriers.ts): DIALER and the parts of its
 * credentials that are not secret, named as an account's own are (schemas/carrier.ts), so both read alike.
 */
export function environmentCarrier(config: CarrierConfig): EnvironmentCarrier {
  const parts: Record<string, string | undefined> =
    config.DIALER === 'twilio'
      ? { account_sid: config.TWILIO_ACCOUNT_SID }
      : config.DIALER === 'telnyx'
        ? { public_key: config.TELNYX_PUBLIC_KEY, connection_id: config.TELNYX_CONNECTION_ID }
        : config.DIALER === 'signalwire'
          ? { space_url: config.SIGNALWIRE_SPACE_URL, project_id: config.SIGNALWIRE_PROJECT_ID }
          : {};
  const shown = Object.fromEntries(
    Object.entries(parts).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return { provider: config.DIALER, shown };
}

/** Where credentials being saved are checked (src/dispatch/carrier-accounts.ts): the real APIs, or a test's stand-in. */
export function carrierApiAddresses(config: CarrierConfig): CarrierApiAddresses {
  return {
    twilioApiBaseUrl: config.TWILIO_API_BASE_URL,
    telnyxApiBaseUrl: config.TELNYX_API_BASE_URL,
    signalwireApiBaseUrl: config.SIGNALWIRE_API_BASE_URL,
  };
}

/** Why an account's own carrier cannot be set with this configuration (null: it can): the carrier calls back here. */
export function carrierSetRefusal(config: { PUBLIC_BASE_URL?: string | undefined }): string | null {
  return config.PUBLIC_BASE_URL
    ? null
    : "PUBLIC_BASE_URL is not set: a carrier could not call this service back with the calls' progress. Set it to " +
        "the service's public https address first";
}
