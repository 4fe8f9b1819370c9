// The overview page's model: what src/views/pages/overview.eta reads (with the partials it includes).
import type { Role } from '../../domain/roles.js';
import type { AccountKind, EndpointState, KeysOf } from './model-parts.js';
import type { ChartModel } from './overview-chart.js';

export type OverviewModel = {
  /** Whether the endpoint warnings are announced (role="alert"): on a page load, not on each live refresh. */
  announce: boolean;
  /**
   * The five steps to a first call, each done or linking to where it is taken, and for an agency the calling rules
   * (`recommended`: not a step to a first call); null once all are done. A step's link is shown to the roles its page
   * lets through (`role`, the least; none: every role), the others read the role it needs.
   */
  checklist: { label: string; done: boolean; href: string; hint: string; recommended?: boolean; role?: Role }[] | null;
  /**
   * The scope's waiting calls the calling rules hold (of them, over a cap per number), linking to the Calls list of
   * them; null when none is held and the rules are off.
   */
  held: { held: number; capped: number; href: string } | null;
  rows: {
    name: string;
    kind: AccountKind;
    active: number;
    waiting: number;
    waitingForWindow: number;
    scheduled: number;
    waitingForRetry: number;
    completed: number;
    failed: number;
    failures: { reason: string; count: number }[];
    /** The Calls list filtered to each number's calls (active links to those connected: one status a filter). */
    links: { active: string; waiting: string; completed: string; failed: string };
    endpoint:
      | (EndpointState & {
          lastSuccess: string | null;
          failuresLastHour: number;
          /** Enabled, but attempts of the last hour failed: a warning, not a green "Enabled". */
          failing: boolean;
          settingsHref: string;
          /** Its delivery log, failed deliveries only. */
          logHref: string;
        })
      | null;
  }[];
  /**
   * The clients left out of `rows` (an agency of more than the Overview lists), and how many of them have calls
   * under way or waiting; null when every account is shown.
   */
  notShown: { count: number; underWay: number } | null;
  limit: number;
  maxWaiting: number;
  /**
   * The day "today" is (YYYY-MM-DD) in the zone the viewer's times are shown in (UTC when they chose none or show
   * UTC), and when it began there ("2056-03-01 00:00:00 PST").
   */
  today: { day: string; zone: string; from: string };
  asOf: string;
  perClient: boolean;
  /** Calls per day by outcome over the last 7 or 30 days, in the viewer's whole scope (overview-chart.ts). */
  chart: ChartModel;
};

/** The fields overview.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const OVERVIEW_FIELDS = [
  'announce',
  'checklist',
  'held',
  'rows',
  'notShown',
  'limit',
  'maxWaiting',
  'today',
  'asOf',
  'perClient',
  'chart',
] as const satisfies readonly KeysOf<OverviewModel>[];
