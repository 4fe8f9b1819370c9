// When the dashboard is busy: a signed-in user's requests in flight are capped (the signed-in family's onRequest
// hook), and a request over the cap, or one that meets an overloaded database, gets the busy page (503, Retry-After),
// never a 500. An htmx live refresh answered 503 is not swapped in (htmx swaps no 4xx/5xx): the page keeps what it
// shows and asks again at its next tick.
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type {} from '@fastify/sensible';
import { ThrottledLog } from '../../src/logging/throttled-log.js';
import { clearHeadersForError, isDatabaseUnavailable } from '../errors.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../schemas/headers.js';

/**
 * A user's dashboard requests at once, per process. A page, a live refresh or two and a form fit in it; a script or a
 * wall of tabs refreshing together does not. Per process, not shared by replicas: what it protects is each process's
 * request pool (src/storage/database.ts), and counting in Redis would cost two round trips on every page.
 */
export const USER_IN_FLIGHT_MAX = 4;
/** The API's too; and the live refresh's interval (src/views/layout.eta): a refused refresh comes back at its next tick. */
export const BUSY_RETRY_AFTER_SECONDS = UNAVAILABLE_RETRY_AFTER_SECONDS;
export const BUSY_MESSAGE = 'The service is busy right now. Try again in a few seconds.';

declare module 'fastify' {
  interface FastifyReply {
    /**
     * The busy page: 503 with Retry-After, the error page's frame and one plain sentence. Logged throttled and
     * without a stack (an outage or a burst would otherwise write one per request); a refusal by the cap is not
     * logged. No session is saved (as for any 5xx): a refused request writes nothing.
     */
    busy(error: Error & { statusCode?: number }): FastifyReply;
  }
  interface FastifyInstance {
    /**
     * The signed-in family's onRequest hook (src/routes/dashboard/index.ts): counts the viewer's request in flight
     * until its response is over, or refuses it (503) when they already have USER_IN_FLIGHT_MAX. Before the body is
     * read and any handler query: a refused request costs no more than the session and user lookups before it.
     */
    limitUserInFlight: onRequestAsyncHookHandler;
  }
}

/** Whether `error` is an overload the user can wait out (a busy database or this cap), not a fault. */
export function isBusy(error: { statusCode?: number }): boolean {
  return error.statusCode === 503 || isDatabaseUnavailable(error);
}

export default fp(
  async (fastify) => {
    const inFlight = new Map<string, number>();
    const release = (userId: string) => {
      const left = (inFlight.get(userId) ?? 1) - 1;
      if (left > 0) inFlight.set(userId, left);
      else inFlight.delete(userId);
    };
    const log = new ThrottledLog(fastify.log);
    fastify.decorateReply('busy', function (this: FastifyReply, error: Error & { statusCode?: number }) {
      if (error.statusCode !== 503) {
        const { code } = error as { code?: unknown };
        log.warn(
          'dashboard-busy',
          { code, error: error.message },
          'dashboard busy: database overloaded or unreachable',
        );
      }
      const request = this.request;
      if (request.session) (request as { session: unknown }).session = null;
      clearHeadersForError(this);
      return this.code(503)
        .header('retry-after', String(BUSY_RETRY_AFTER_SECONDS))
        .page('error', { title: 'Busy', message: BUSY_MESSAGE });
    });
    fastify.decorate('limitUserInFlight', async function (request: FastifyRequest, reply: FastifyReply) {
      const userId = request.viewer?.id;
      if (!userId) return;
      const count = inFlight.get(userId) ?? 0;
      if (count >= USER_IN_FLIGHT_MAX) throw fastify.httpErrors.serviceUnavailable(BUSY_MESSAGE);
      inFlight.set(userId, count + 1);
      // 'close' comes once the response is over, or when the connection went first: never missed, so a slot cannot
      // leak and lock the user out (a client that hangs up early frees its slot while its handler may still run).
      reply.raw.once('close', () => release(userId));
    });
  },
  {
    name: 'dashboard-busy',
    fastify: '5.x',
    dependencies: ['dashboard-viewer', 'dashboard-pages', '@fastify/sensible'],
  },
);
