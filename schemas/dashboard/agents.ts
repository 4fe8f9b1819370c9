// The Agents pages' forms. Bounds only: what a phone number, time zone or calling window must be is said in
// callctl's words by src/admin/agents.ts, on the page.
import { Type, type Static } from '@sinclair/typebox';
import { Form } from './forms.js';

/** A repeated field: one value, or several in the order of the rows on the page. */
const Rows = (description: string, maxLength: number) =>
  Type.Optional(
    Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems: 50 })], { description }),
  );

export const AgentForm = Form(
  {
    name: Type.String({
      maxLength: 1000,
      description:
        "The agent's name (1 to 200 characters; a visible character, no control or text-direction characters)",
    }),
    phone: Type.String({
      maxLength: 100,
      description: 'Caller ID in E.164, e.g. +14155552671; empty: none (the agent cannot place calls)',
    }),
    timezone: Type.String({ maxLength: 100, description: 'IANA time zone the calling windows are read in' }),
    policy: Type.Union([Type.Literal('queue'), Type.Literal('reject')], {
      description: 'Outside the calling window: queue the call until it opens, or reject the trigger',
    }),
    account: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'The account the new agent belongs to (agency users; the agency or one of its clients)',
      }),
    ),
    window_days: Rows(
      'Each calling window row: its days (mon-fri, sat,sun, daily, one day, or as callctl writes them)',
      100,
    ),
    window_from: Rows("Each calling window row: opens at HH:MM in the agent's time zone", 20),
    window_to: Rows('Each calling window row: closes at HH:MM (earlier than "from": the next day)', 20),
  },
  'Create or edit an agent',
);
export type AgentForm = Static<typeof AgentForm>;

export const AgentParams = Type.Object({
  id: Type.String({ maxLength: 1000, description: 'The agent id (anything else is a 404)' }),
});
export type AgentParams = Static<typeof AgentParams>;
