// The forms and query strings of Settings → API & Webhooks (an account's own, or a client's from its detail page).
import { Type, type Static } from '@sinclair/typebox';
import { Form } from './forms.js';

/** What a form that replaces a secret was made for: a key's or endpoint's version, or "none". */
const Replaces = (what: string) =>
  Type.String({
    maxLength: 64,
    description: `The ${what} this form was shown for ("none" when there was none): a second send of the same form changes nothing`,
  });

export const ClientParams = Type.Object(
  { id: Type.String({ maxLength: 64, description: "The client's account id" }) },
  { description: 'A client of the agency' },
);
export type ClientParams = Static<typeof ClientParams>;

export const DeliveryParams = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 64, description: "The client's account id (on a client's page)" })),
    deliveryId: Type.String({ maxLength: 64, description: 'The delivery (its webhook-id)' }),
  },
  { description: 'One webhook delivery of the account' },
);
export type DeliveryParams = Static<typeof DeliveryParams>;

export const GenerateKeyForm = Form(
  {
    replaces: Replaces('key id'),
    confirm: Type.Optional(Type.Literal('on', { description: 'Ticked: the current key stops working at once' })),
  },
  'Generate a new API key (the current one stops working at once)',
);
export type GenerateKeyForm = Static<typeof GenerateKeyForm>;

export const ApiAccessForm = Form(
  {
    api_access: Type.Union([Type.Literal('on'), Type.Literal('off')], { description: 'Switch API access on or off' }),
    confirm: Type.Optional(
      Type.Literal('on', {
        description:
          'Sent by the confirmation page: switching off happens only with it (without it, that page is shown)',
      }),
    ),
  },
  "Switch the account's API access (off: after a confirmation page that names what stops)",
);
export type ApiAccessForm = Static<typeof ApiAccessForm>;

export const DefaultAgentForm = Form(
  { agent_id: Type.String({ maxLength: 64, description: 'The agent used when a trigger names none' }) },
  'Set the default agent',
);
export type DefaultAgentForm = Static<typeof DefaultAgentForm>;

export const WEBHOOK_URL_MAX_LENGTH = 2048;

export const WebhookForm = Form(
  {
    url: Type.String({ maxLength: WEBHOOK_URL_MAX_LENGTH, description: 'The https URL events are sent to' }),
    replaces: Replaces('endpoint version'),
  },
  'Set the webhook URL (a new signing secret is made)',
);
export type WebhookForm = Static<typeof WebhookForm>;

const FailedOnly = Type.Optional(Type.Literal('1', { description: 'Only deliveries that failed' }));
const Before = Type.Optional(
  Type.String({ maxLength: 100, description: 'Cursor: the page starts after this delivery (from "Older")' }),
);

export const DeliveryLogQuery = Type.Object(
  { failed: FailedOnly, before: Before },
  { description: "One page of the endpoint's deliveries, newest first" },
);
export type DeliveryLogQuery = Static<typeof DeliveryLogQuery>;

const FromCall = Type.Optional(
  Type.String({
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
    description: 'The call whose detail view the button is on: back there afterwards',
  }),
);

export const ResendForm = Form(
  { failed: FailedOnly, before: Before, call: FromCall },
  'Send one delivery again (the page to come back to)',
);
export type ResendForm = Static<typeof ResendForm>;

export const ResendFailedForm = Form(
  {
    since: Type.String({
      maxLength: 40,
      description: 'UTC date and time, YYYY-MM-DDTHH:MM: failed deliveries made since then are sent again',
    }),
  },
  'Send every failed delivery since a time again',
);
export type ResendFailedForm = Static<typeof ResendFailedForm>;
