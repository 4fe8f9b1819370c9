// The forms and query strings of Settings → API & Webhooks (an account's own, or a client's from its detail page).
import { Type, type Static } from '@sinclair/typebox';
import { Form, UTC_MINUTE_PATTERN } from './forms.js';
import { UUID_PATTERN } from '../uuid.js';

/** What a form that replaces a secret was made for: a key's or endpoint's version (`version`), or "none". */
const Replaces = (what: string, version: string) =>
  Type.String({
    maxLength: 64,
    pattern: `^(?:none|${version})$`,
    description: `The ${what} this form was shown for ("none" when there was none): a second send of the same form changes nothing`,
  });

export const DeliveryParams = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 64, description: "The client's account id (on a client's page)" })),
    deliveryId: Type.String({ pattern: UUID_PATTERN, description: 'The delivery (its webhook-id)' }),
  },
  { description: 'One webhook delivery of the account' },
);
export type DeliveryParams = Static<typeof DeliveryParams>;

export const GenerateKeyForm = Form(
  {
    replaces: Replaces('key id', UUID_PATTERN.slice(1, -1)),
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
  {
    agent_id: Type.String({
      maxLength: 64,
      pattern: UUID_PATTERN,
      description: 'The agent used when a trigger names none (one the account may use)',
    }),
  },
  'Set the default agent',
);
export type DefaultAgentForm = Static<typeof DefaultAgentForm>;

export const WEBHOOK_URL_MAX_LENGTH = 2048;

export const WebhookForm = Form(
  {
    url: Type.String({ maxLength: WEBHOOK_URL_MAX_LENGTH, description: 'The https URL events are sent to' }),
    replaces: Replaces('endpoint version (its last change, epoch milliseconds)', '[0-9]{1,15}'),
    rotate: Type.Optional(
      Type.Literal('on', {
        description:
          'Ticked: a new signing secret is made too (shown once). Without it a changed URL keeps the secret; a new endpoint always gets one',
      }),
    ),
  },
  'Set the webhook URL (a new endpoint gets a signing secret; a changed one keeps its own unless rotate is ticked)',
);
export type WebhookForm = Static<typeof WebhookForm>;

const FailedOnly = Type.Optional(
  Type.Literal('1', { description: 'Only deliveries that failed (older links; status=failed says the same)' }),
);
const Before = Type.Optional(
  Type.String({ maxLength: 100, description: 'Cursor: the page starts after this delivery (from "Older")' }),
);
/** A filter as the GET form sends it: empty when not set; its value is checked by the page, which says what is wrong. */
const Filter = (description: string) => Type.Optional(Type.String({ maxLength: 100, description }));
/** The delivery log's filters, shared by its query and by the resend forms that come back to it. */
const LogFilters = {
  event: Filter('Only deliveries of this event type: call.started, call.completed or call.failed'),
  status: Filter('Only deliveries in this status: succeeded (delivered), failed, pending or held'),
  from: Filter('Created on or after this UTC day (YYYY-MM-DD) or minute (YYYY-MM-DDTHH:MM)'),
  to: Filter('Created on or before this UTC day (the whole day) or minute'),
};

export const DeliveryLogQuery = Type.Object(
  { ...LogFilters, failed: FailedOnly, before: Before },
  { description: "One page of the endpoint's deliveries, newest first" },
);
export type DeliveryLogQuery = Static<typeof DeliveryLogQuery>;

const FromCall = Type.Optional(
  Type.String({
    pattern: UUID_PATTERN,
    description: 'The call whose detail view the button is on: back there afterwards',
  }),
);

export const ResendForm = Form(
  { ...LogFilters, failed: FailedOnly, before: Before, call: FromCall },
  'Send one delivery again (the page to come back to)',
);
export type ResendForm = Static<typeof ResendForm>;

export const ResendFailedForm = Form(
  {
    since: Type.String({
      maxLength: 40,
      pattern: UTC_MINUTE_PATTERN,
      description:
        'UTC date and time, YYYY-MM-DDTHH:MM (seconds optional, a space for the T allowed): failed deliveries made since then are sent again',
    }),
  },
  'Send every failed delivery since a time again',
);
export type ResendFailedForm = Static<typeof ResendFailedForm>;
