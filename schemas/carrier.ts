// The carrier an account dials through and the credentials it is given (PRODUCT.md, "Placing calls"): one shape per
// provider, checked at the field by the dashboard and callctl alike. The secret parts (token, API key) are sealed at
// rest and never shown again; the others are shown so that a user can tell which carrier account is in use. A leaf.
import { Type, type Static } from '@sinclair/typebox';
import { UUID_PATTERN } from './uuid.js';

export const CARRIER_PROVIDERS = ['twilio', 'telnyx', 'signalwire'] as const;
export type CarrierProvider = (typeof CARRIER_PROVIDERS)[number];

/** How each provider is named to people. */
export const PROVIDER_NAMES: Record<CarrierProvider | 'simulated', string> = {
  twilio: 'Twilio',
  telnyx: 'Telnyx',
  signalwire: 'SignalWire',
  simulated: 'the simulated dialer',
};

/** A credential as typed: printable ASCII without spaces, so that nothing can hide in it or break a header. */
const token = (description: string, minLength: number, maxLength: number, secret = false) =>
  Type.String({ minLength, maxLength, pattern: '^[!-~]+$', description, ...(secret && { secret }) });

export const TwilioCredentials = Type.Object(
  {
    account_sid: Type.String({
      pattern: '^AC[0-9a-fA-F]{32}$',
      description: 'Account SID (AC followed by 32 hex digits)',
    }),
    auth_token: Type.String({ pattern: '^[0-9a-fA-F]{32}$', description: 'Auth token (32 hex digits)', secret: true }),
  },
  { additionalProperties: false },
);

export const TelnyxCredentials = Type.Object(
  {
    api_key: token('API key (v2), e.g. KEY0123...', 20, 200, true),
    public_key: Type.String({
      pattern: '^[A-Za-z0-9+/]{43}=$',
      description:
        "The account's public key for webhook signatures (base64 of 32 bytes, from the portal's Keys & Credentials)",
    }),
    connection_id: Type.String({
      pattern: '^[0-9A-Za-z-]{1,64}$',
      description: 'The Call Control application (connection) id calls are placed on',
    }),
  },
  { additionalProperties: false },
);

export const SignalWireCredentials = Type.Object(
  {
    space_url: Type.String({
      pattern: '^https://[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.signalwire\\.com/?$',
      description: "The space's address, https://<space>.signalwire.com",
    }),
    project_id: Type.String({ pattern: UUID_PATTERN, description: 'Project ID (a UUID)' }),
    token: token('API token, e.g. PT0123...', 20, 200, true),
    signing_key: token(
      'Signing key, e.g. PSK_0123... (SignalWire signs its callbacks with it, not with a token)',
      10,
      200,
      true,
    ),
  },
  { additionalProperties: false },
);

export const CARRIER_CREDENTIALS = {
  twilio: TwilioCredentials,
  telnyx: TelnyxCredentials,
  signalwire: SignalWireCredentials,
} as const;

export type CarrierCredentials =
  | { provider: 'twilio'; credentials: Static<typeof TwilioCredentials> }
  | { provider: 'telnyx'; credentials: Static<typeof TelnyxCredentials> }
  | { provider: 'signalwire'; credentials: Static<typeof SignalWireCredentials> };

/** The names of a provider's secret credentials: sealed at rest, never shown, never audited. */
export function secretFields(provider: CarrierProvider): string[] {
  const properties = CARRIER_CREDENTIALS[provider].properties as Record<string, { secret?: boolean }>;
  return Object.keys(properties).filter((name) => properties[name]!.secret === true);
}

/** The credentials that may be shown again (account SID, connection id, space, project): the secrets left out. */
export function shownCredentials(carrier: CarrierCredentials): Record<string, string> {
  const secret = new Set(secretFields(carrier.provider));
  return Object.fromEntries(
    Object.entries(carrier.credentials as Record<string, string>).filter(([name]) => !secret.has(name)),
  );
}
