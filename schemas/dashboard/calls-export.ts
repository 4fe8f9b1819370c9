// The consent export's query string (the Calls page's "Export calls with consent (CSV)" form): a period of days in the
// viewer's time zone, both days included.
import { Type, type Static } from '@sinclair/typebox';

const Day = (description: string) =>
  Type.String({ maxLength: 100, pattern: '^\\s*\\d{4}-\\d{2}-\\d{2}\\s*$', description });

export const CallsExportQuery = Type.Object(
  {
    from: Day("The period's first day, YYYY-MM-DD, in the viewer's time zone (UTC when none is chosen)"),
    to: Day("The period's last day, YYYY-MM-DD, included; at most 93 days after the first"),
  },
  { description: 'The calls created in a period, with their consent and last calling-rules decision, as CSV' },
);
export type CallsExportQuery = Static<typeof CallsExportQuery>;
