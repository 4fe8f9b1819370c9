// The Overview, the landing page after sign-in: for the viewer's account and, for an agency, each of its clients,
// the calls active now out of the concurrency limit, the calls waiting (and how many for a calling window), today's
// outcomes (UTC) and the webhook endpoint's health. Live counts come from the concurrency plugin, the rest from
// storage reads of recent rows (src/storage/overview.ts): nothing counts an account's history.
import type { FastifyInstance } from 'fastify';
import { FAILURE_REASONS } from '../../domain/call-vocabulary.js';
import { requireUser, viewerOf } from '../../../plugins/dashboard/guards.js';
import { formatTime } from './call-view.js';
import { disabledReasonWords } from './settings-words.js';
import {
  agencyAndClients,
  endpointHealth,
  noOutcomes,
  outcomesBetween,
  type OverviewAccount,
} from '../../storage/overview.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** How a failure reason reads on the page. */
const REASON_WORDS: Record<(typeof FAILURE_REASONS)[number], string> = {
  busy: 'busy',
  no_answer: 'no answer',
  rejected: 'rejected',
  provider_error: 'provider error',
  expired: 'expired (waited too long)',
  canceled: 'canceled',
};

const utcTime = formatTime;

export default async function overview(fastify: FastifyInstance) {
  fastify.get('', { schema: { hide: true }, preHandler: requireUser }, async (request, reply) => {
    const viewer = viewerOf(request);
    const now = fastify.now();
    const accounts: OverviewAccount[] =
      viewer.accountKind === 'agency'
        ? await agencyAndClients(fastify.prisma, viewer.accountId)
        : [{ id: viewer.accountId, name: viewer.accountName, kind: 'client' }];
    const ids = accounts.map((a) => a.id);
    const today = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
    const [live, outcomes, endpoints] = await Promise.all([
      fastify.concurrency.counts(ids),
      outcomesBetween(fastify.prisma, ids, today, new Date(today.getTime() + DAY_MS)),
      endpointHealth(fastify.prisma, ids, new Date(now.getTime() - HOUR_MS)),
    ]);
    const rows = accounts.map((account) => {
      const counts = live.get(account.id) ?? { active: 0, waiting: 0, waitingForWindow: 0 };
      const done = outcomes.get(account.id) ?? noOutcomes();
      const failures = FAILURE_REASONS.filter((r) => done.failed[r] > 0).map((r) => ({
        reason: REASON_WORDS[r],
        count: done.failed[r],
      }));
      const endpoint = endpoints.get(account.id);
      return {
        name: account.name,
        kind: account.kind,
        active: counts.active,
        waiting: counts.waiting,
        waitingForWindow: counts.waitingForWindow,
        completed: done.completed,
        failed: failures.reduce((sum, f) => sum + f.count, 0),
        failures,
        endpoint: endpoint && {
          url: endpoint.url,
          enabled: endpoint.enabled,
          disabledReason: disabledReasonWords(endpoint.disabledReason),
          lastSuccess: endpoint.lastSuccessAt ? utcTime(endpoint.lastSuccessAt) : null,
          failuresLastHour: endpoint.failuresSince,
        },
      };
    });
    return reply.page('overview', {
      title: 'Overview',
      rows,
      limit: fastify.concurrency.limits.maxActive,
      maxWaiting: fastify.concurrency.limits.maxWaiting,
      today: today.toISOString().slice(0, 10),
      asOf: utcTime(now),
      perClient: viewer.accountKind === 'agency',
    });
  });
}
