// The Overview's chart's statement and row (OverviewRepository.outcomesByDay runs it): a scope's calls per UTC day by outcome over the last days (7 or 30), from the outcome counters
// the triggers on calls keep (call_outcome_days, 31 days since migration 20261202090000): 'completed' or the failure
// reason, and 'agent:<label>' for the completed calls whose runtime gave an outcome. Never the calls themselves.
// The chart stays per UTC day, whatever the viewer's zone (the page says so): its 31 days are kept per day, and the
// quarter-hour counters that follow the viewer's midnight for "today" (20261202110000) keep 48 hours only.
import type { Scope } from '../domain/tenancy.js';
import { ownedByKindSql } from './scope-where.js';
import { statement } from './statements.js';

/** The counters' key of a runtime's outcome label: 'agent:' and the label (labels are [a-z0-9_.-]). */
export const AGENT_OUTCOME_PREFIX = 'agent:';

// Hand-written: one range of an index whatever the number of accounts (an agency's counters by (agency_id, day), a
// client's by its primary key (account_id, day, outcome)), summed per day and outcome: at most 31 days of a few rows
// per account that ended calls. One text per kind of scope, so that each is one index range (ownedByKindSql).
const dayOutcomes = (kind: Scope['kind']) =>
  statement(
    `oct_overview_chart_${kind}`,
    `
  SELECT o.day::text AS day, o.outcome, sum(o.calls)::int AS calls
    FROM call_outcome_days o
   WHERE ${ownedByKindSql(kind, 'o', 1)} AND o.day >= $2::date AND o.day <= $3::date AND o.calls <> 0
   GROUP BY o.day, o.outcome`,
  );
export const DAY_OUTCOMES = { agency: dayOutcomes('agency'), client: dayOutcomes('client') };

/** One day's counts of one outcome: 'completed', a failure reason, or AGENT_OUTCOME_PREFIX + a runtime's label. */
export interface DayOutcome {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  outcome: string;
  calls: number;
}
