// The Carrier page's forms: an account's carrier and its credentials (one form per provider, each sending its own
// fields), and an agency's switch letting its clients choose their own. Lengths only bound the input; what each
// credential must be (schemas/carrier.ts) src/admin/carriers.ts checks, in callctl's words, next to its field.
import { Type, type Static } from '@sinclair/typebox';
import { Form } from './forms.js';

const Credential = (description: string) => Type.Optional(Type.String({ maxLength: 1000, description }));

export const CarrierForm = Form(
  {
    provider: Type.String({ maxLength: 40, description: 'twilio, telnyx or signalwire' }),
    account_sid: Credential('Twilio: the Account SID'),
    auth_token: Credential('Twilio: the auth token (secret)'),
    api_key: Credential('Telnyx: the API key (secret)'),
    connection_id: Credential('Telnyx: the Call Control application (connection) id'),
    public_key: Credential("Telnyx: the account's public key for webhook signatures"),
    space_url: Credential("SignalWire: the space's address"),
    project_id: Credential('SignalWire: the project ID'),
    token: Credential('SignalWire: the API token (secret)'),
    signing_key: Credential('SignalWire: the signing key (secret)'),
  },
  "Set an account's carrier",
);
export type CarrierForm = Static<typeof CarrierForm>;

export const ClientsChooseForm = Form(
  {
    allowed: Type.Union([Type.Literal('on'), Type.Literal('off')], {
      description: "on: the agency's clients may set a carrier of their own; off: they all use the agency's",
    }),
  },
  "Switch whether an agency's clients choose their carrier",
);
export type ClientsChooseForm = Static<typeof ClientsChooseForm>;
