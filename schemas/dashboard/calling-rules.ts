// The Calling rules page's forms: an agency's settings, and an own rule of hours to add or remove. Lengths and
// choices bound the input; what each value must be (a rule set or kind we know, a cap from 1 to its maximum, a name of
// one readable line, a start before the end) src/admin/calling-rules-input.ts checks, in the words callctl gives too,
// so that the page shows each refusal next to its field.
import { Type, type Static } from '@sinclair/typebox';
import { Form } from './forms.js';

/** A repeated field (ticked boxes): one value, or several. */
const OneOrMany = (description: string, maxLength: number, maxItems: number) =>
  Type.Optional(
    Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems })], { description }),
  );

const Written = (description: string, maxLength = 40) => Type.Optional(Type.String({ maxLength, description }));

export const CallingRulesSettingsForm = Form(
  {
    enabled: Type.Union([Type.Literal('on'), Type.Literal('off')], {
      description: 'on: every call of the agency and its clients is checked before each attempt; off: as before',
    }),
    rule_sets: OneOrMany('The laws applied, one field per ticked box: us, ca; absent: none', 40, 10),
    call_kinds: OneOrMany(
      'What the calls are, one field per ticked box: telephone_solicitation, telemarketing, automated',
      60,
      10,
    ),
    cap_24h: Written('Most dial attempts to one number per rolling 24 hours (1 to 50); empty: no cap'),
    cap_7d: Written('Most dial attempts to one number per rolling 7 days (1 to 200); empty: none'),
    cap_scope: Written('agency: counted across the agency and all its clients; account: per account'),
    consent_required: Type.Optional(Type.Literal('on', { description: 'Ticked: every trigger needs consent' })),
  },
  "Change an agency's calling rules",
);
export type CallingRulesSettingsForm = Static<typeof CallingRulesSettingsForm>;

export const CallingHoursForm = Form(
  {
    name: Type.String({
      maxLength: 1000,
      description: 'The rule’s name, unique in the account (at most 100 characters)',
    }),
    days: OneOrMany('The days calls are allowed, one field per ticked box: mon ... sun', 20, 14),
    from: Type.String({ maxLength: 40, description: "The first minute allowed, HH:MM, the callee's local time" }),
    to: Type.String({ maxLength: 40, description: 'The end (excluded), HH:MM after from; 24:00 for midnight' }),
  },
  'Add an own rule of hours: calls only on these days, in this daily range',
);
export type CallingHoursForm = Static<typeof CallingHoursForm>;

export const RemoveCallingHoursForm = Form(
  { name: Type.String({ maxLength: 1000, description: 'The rule’s name' }) },
  'Remove an own rule of hours',
);
export type RemoveCallingHoursForm = Static<typeof RemoveCallingHoursForm>;
