// The Account page's time-zone form and the header's switch between the user's zone and UTC (docs/dashboard.md,
// "Times"), as TypeBox schemas: route validation and handler types come from here.
import { Type, type Static } from '@sinclair/typebox';
import { Form } from './forms.js';

export const TimeZoneForm = Form(
  {
    timezone: Type.String({
      maxLength: 100,
      description:
        "The user's own time zone: an IANA name the server knows (Europe/Paris; any case, links such as Asia/Calcutta followed); not a UTC offset",
    }),
  },
  'The time zone the dashboard shows your times in',
);
export type TimeZoneForm = Static<typeof TimeZoneForm>;

export const TimesShownForm = Form(
  {
    utc: Type.Union([Type.Literal('1'), Type.Literal('0')], {
      description: "1: this session's pages show times in UTC; 0: in the user's own zone again",
    }),
    back: Type.Optional(
      Type.String({ maxLength: 2048, description: 'The /dashboard page to go back to (the page the switch was on)' }),
    ),
  },
  "The header's switch: times in UTC, or in your own zone",
);
export type TimesShownForm = Static<typeof TimesShownForm>;
