// The Overview, the landing page after sign-in: for the viewer's account and, for an agency, each of its clients,
// the calls active now out of the concurrency limit, the calls waiting (and how many for a calling window, for their
// scheduled time and for a retry), today's outcomes (the viewer's local day so far) and the webhook endpoint's health,
// each number a link to the Calls list filtered to it; the waiting calls the calling rules hold; a warning for each
// endpoint that is disabled or failing; and, until the five steps to a first call (and, for an agency, its calling
// rules) are taken, a checklist of them. Live counts come from the concurrency plugin, the rest from storage
// reads of recent rows (src/storage/overview.ts): nothing counts an account's history. While a call is under way the
// page refreshes itself (layout.eta's live region).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { FAILURE_REASONS, type CallStatus } from '../../../schemas/vocabulary.js';
import { isAgencyScope } from '../../domain/tenancy.js';
import { disabledReasonWords } from '../../views/format/notices.js';
import { OVERVIEW_REASON_WORDS } from '../../views/format/status.js';
import type { FirstRun, OverviewAccount } from '../../storage/index.js';
import type { PageModels } from '../../views/page-models.js';
import { chartDays, overviewChart, type ChartDays } from '../../views/pages/overview-chart.js';

const HOUR_MS = 3_600_000;
const SETTINGS = '/dashboard/settings/api-webhooks';
/** The Calls list's held calls (waiting, held by the calling rules). */
const HELD_CALLS = '/dashboard/calls?held=yes';

type Checklist = NonNullable<PageModels['overview']['checklist']>;

/**
 * The most clients an agency's Overview lists: those with the most to see first (an endpoint disabled or failing,
 * then calls under way, failed today and completed today), then by name (storage's rankedAccounts). An agency of a
 * thousand clients would otherwise get a page of megabytes, again on every live refresh.
 */
export const OVERVIEW_CLIENTS_MAX = 50;

/**
 * The five steps to a first call, each done or with where to take it, and for an agency the calling rules it is
 * recommended to switch on (issue 48: off until it does); null once all are done.
 */
function checklist(done: FirstRun, agency: boolean): Checklist | null {
  const steps: Checklist = [
    {
      label: 'An agent with a phone number',
      done: done.agentWithNumber,
      href: '/dashboard/agents/new',
      role: 'member',
      hint: 'the number its calls come from (caller ID), and the hours it may call',
    },
    {
      label: 'A default agent',
      done: done.defaultAgent,
      href: `${SETTINGS}#agent-heading`,
      hint: 'the agent a trigger without an agent_id uses',
    },
    {
      label: 'An API key',
      done: done.apiKey,
      href: `${SETTINGS}#key-heading`,
      hint: 'your system sends it with each trigger; it is shown once',
    },
    {
      label: 'A webhook endpoint',
      done: done.webhook,
      href: `${SETTINGS}#webhook-heading`,
      hint: 'where call.started, call.completed and call.failed are sent',
    },
    {
      label: 'A first call',
      done: done.firstCall,
      href: '/dashboard/agents',
      hint: 'POST /api/v1/calls/trigger with your key, a phone_number and an agent_id (the Agents page shows them)',
    },
  ];
  if (agency)
    steps.push({
      label: 'Calling rules switched on',
      done: done.callingRules,
      href: '/dashboard/calling-rules',
      hint: 'hours where the callee is, caps per number, consent on record (recommended; off until you switch them on)',
      recommended: true,
    });
  return steps.every((step) => step.done) ? null : steps;
}

/** Where the delivery log of `accountId` lives: the viewer's own settings, or (agency users) a client's. */
function apiWebhooksBase(viewerAccountId: string, accountId: string): string {
  return accountId === viewerAccountId ? SETTINGS : `/dashboard/clients/${accountId}/api-webhooks`;
}

const overview: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get<{ Querystring: { days?: string } }>(
    '',
    { config: { role: 'viewer' }, schema: { hide: true } },
    async (request, reply) => {
      const now = request.admin.now();
      // The chart's range: 7 days unless 30 are asked for (anything else: 7).
      const chartRange: ChartDays = request.query.days === '30' ? 30 : 7;
      const range = chartDays(now, chartRange);
      const times = request.times;
      // "Today" is the viewer's local day so far (UTC's when they chose no zone or show UTC), counted from the quarter-
      // hour counters: every IANA zone in use is a whole number of quarter hours from UTC, so its midnight begins one.
      const day = times.day(now);
      const today = { from: times.parse(day)!, to: now };
      const since = new Date(now.getTime() - HOUR_MS);
      // Which accounts are shown is decided in one statement from a few entries of each; only those are then read in
      // full (their live counts, outcomes and endpoint health).
      const [{ accounts, total, underWay }, firstRun, chartRows, held] = await Promise.all([
        request.scoped.rankedAccounts(OVERVIEW_CLIENTS_MAX, today, since),
        request.scoped.firstRun(),
        request.scoped.outcomesByDay(range[0]!, range.at(-1)!),
        request.scoped.heldCalls(),
      ]);
      const ids = accounts.map((a) => a.id);
      const [live, outcomes, endpoints] = await Promise.all([
        fastify.concurrency.counts(ids),
        request.scoped.outcomesOfDay(accounts, today),
        request.scoped.endpointHealth(accounts, since),
      ]);
      const perClient = isAgencyScope(request.scope);
      // The links name that day, which the Calls list reads in the viewer's zone too (docs/dashboard.md, "Times").
      const todayBounds = { from: day, to: day };
      /**
       * The Calls list filtered to one status (and for outcomes, today). "Today" is the day the calls were created: the
       * list filters by creation, the Overview counts calls that ended today.
       */
      const listHref = (status: CallStatus, when?: 'today') => {
        const query = new URLSearchParams({ status });
        if (when) for (const bound of ['from', 'to'] as const) query.set(bound, todayBounds[bound]);
        return `/dashboard/calls?${query.toString()}`;
      };
      // Each link's query once per page; callsHref adds the account (agency users: a client filter), its id a uuid
      // with nothing to encode. A URLSearchParams per link was a tenth of the server's time for an Overview of 51 rows.
      const lists = {
        active: listHref('in_progress'),
        waiting: listHref('initiated'),
        completed: listHref('completed', 'today'),
        failed: listHref('failed', 'today'),
      };
      const callsHref = (accountId: string, list: keyof typeof lists) =>
        perClient ? `${lists[list]}&client=${accountId}` : lists[list];
      const rowOf = (account: OverviewAccount) => {
        const counts = live.get(account.id) ?? {
          active: 0,
          waiting: 0,
          waitingForWindow: 0,
          scheduled: 0,
          waitingForRetry: 0,
        };
        const done = outcomes.get(account.id)!;
        const failures = FAILURE_REASONS.filter((r) => done.failed[r] > 0).map((r) => ({
          reason: OVERVIEW_REASON_WORDS[r],
          count: done.failed[r],
        }));
        const endpoint = endpoints.get(account.id);
        const base = apiWebhooksBase(request.user.accountId, account.id);
        return {
          name: account.name,
          kind: account.kind,
          active: counts.active,
          waiting: counts.waiting,
          waitingForWindow: counts.waitingForWindow,
          scheduled: counts.scheduled,
          waitingForRetry: counts.waitingForRetry,
          completed: done.completed,
          failed: failures.reduce((sum, f) => sum + f.count, 0),
          failures,
          // The list has one status at a time: "active" (dialling or connected) links to the connected calls.
          links: {
            active: callsHref(account.id, 'active'),
            waiting: callsHref(account.id, 'waiting'),
            completed: callsHref(account.id, 'completed'),
            failed: callsHref(account.id, 'failed'),
          },
          endpoint: endpoint
            ? {
                url: endpoint.url,
                enabled: endpoint.enabled,
                disabledReason: disabledReasonWords(endpoint.disabledReason, times),
                lastSuccess: times.orNull(endpoint.lastSuccessAt),
                failuresLastHour: endpoint.failuresSince,
                failing: endpoint.enabled && endpoint.failuresSince > 0,
                settingsHref: `${base}#webhook-heading`,
                logHref: `${base}/deliveries?failed=1`,
              }
            : null,
        };
      };
      const notShown = total - accounts.length;
      return reply.page('overview', {
        title: 'Overview',
        live: underWay > 0,
        // A refresh (htmx) swaps the warnings in again: an alert role would have them read out every few seconds.
        announce: request.headers['hx-request'] !== 'true',
        checklist: checklist(firstRun, perClient),
        // Shown while the rules hold a call, and always to an agency that switched them on.
        held: held.held > 0 || firstRun.callingRules ? { ...held, href: HELD_CALLS } : null,
        rows: accounts.map(rowOf),
        // Of the accounts not shown, those with calls under way (as ranked: the same statement counted them all).
        notShown:
          notShown > 0 ? { count: notShown, underWay: underWay - accounts.filter((a) => a.underWay > 0).length } : null,
        limit: fastify.concurrency.limits.maxActive,
        maxWaiting: fastify.concurrency.limits.maxWaiting,
        today: { day, zone: times.zone, from: times.time(today.from) },
        asOf: times.time(now),
        perClient,
        chart: overviewChart(chartRows, now, chartRange, '/dashboard'),
      });
    },
  );
};

export default overview;
