// The service's configuration and clock as `fastify.config` and `fastify.now`, decorated by a plugin so that the
// plugins that read them can declare it as a dependency.
import fp from 'fastify-plugin';
import type { Config } from '../src/config.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    /** The service's clock: every "now" of the domain (acceptance, windows, expiries, leases) reads it. */
    now: () => Date;
  }
}

export interface ConfigPluginOptions {
  config: Config;
  /** Tests inject a clock to reach calling windows and expiries without waiting. */
  clock?: (() => Date) | undefined;
}

export default fp<ConfigPluginOptions>(
  async (fastify, { config, clock }) => {
    fastify.decorate('config', config);
    fastify.decorate('now', clock ?? (() => new Date()));
  },
  { name: 'config', fastify: '5.x' },
);
