// The signed-in user of a dashboard request as `request.viewer` (null when nobody is signed in), and the times the
// request's pages show as `request.times`: in the viewer's own zone (Account page), or in UTC for a visitor, a user
// who never chose one, and a session switched to "Show times in UTC". Read on every request, so a user disabled a
// moment ago is signed out at their next click, on every replica.
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { type ActiveUser } from '../../src/storage/index.js';
import { ShownTimes, UTC_TIMES } from '../../src/views/format/shown-times.js';

declare module 'fastify' {
  interface FastifyRequest {
    viewer: ActiveUser | null;
    /** How this request's pages write a moment and read a typed day or minute (src/views/format/shown-times.ts). */
    readonly times: ShownTimes;
  }
  interface Session {
    /** "Show times in UTC" from the header's switch: this session's pages show UTC, whatever the user's zone. */
    timesInUtc?: boolean;
  }
}

/** One ShownTimes per request, made at its first use: the viewer (and so their zone) is known by then. */
const timesOf = new WeakMap<FastifyRequest, { own: string; times: ShownTimes }>();

export default fp(
  async (fastify) => {
    fastify.decorateRequest('viewer', null);
    fastify.decorateRequest('times', {
      getter(this: FastifyRequest): ShownTimes {
        const zone = this.viewer?.timezone;
        if (!zone || this.session?.timesInUtc) return UTC_TIMES;
        let made = timesOf.get(this);
        if (made?.own !== zone) timesOf.set(this, (made = { own: zone, times: new ShownTimes(zone) }));
        return made.times;
      },
    });
    fastify.addHook('onRequest', async (request) => {
      const userId = request.session.userId;
      if (!userId) return;
      const user = await fastify.storage.users.findActiveUser(userId);
      if (user) {
        request.viewer = user;
        return;
      }
      // Disabled (or gone) since the session began: the session ends, and the request goes on as a visitor's.
      await request.session.regenerate();
    });
  },
  { name: 'dashboard-viewer', fastify: '5.x', dependencies: ['@fastify/session'] },
);
