// The database as two storages (repositories over Prisma with @prisma/adapter-pg, no native engine), one per
// connection pool: `fastify.storage` for requests, `fastify.backgroundStorage` for background work
// (src/storage/database.ts says why); both closed on close.
import fp from 'fastify-plugin';
import { createPrisma, BACKGROUND_POOL, REQUEST_POOL } from '../src/storage/database.js';
import { storageOver, type Storage, type Storages } from '../src/storage/storage.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The request pool's storage: requests and whatever answers one (short wait for a connection, then 503). */
    storage: Storage;
    /** The background pool's storage: the dispatcher, the simulated dialer, the webhook worker, NOTIFY (waits longer). */
    backgroundStorage: Storage;
  }
}

export interface DbPluginOptions {
  databaseUrl: string;
  /** The two storages when the caller made them (over REQUEST_POOL and BACKGROUND_POOL); the plugin closes them. */
  storages?: Storages | undefined;
}

export default fp<DbPluginOptions>(
  async (fastify, { databaseUrl, storages }) => {
    // Connections open on first use: readiness reports the database, and the app can be built without one
    // (npm run openapi generates the contract from the routes alone).
    const { requests, background } = storages ?? {
      requests: storageOver(createPrisma(databaseUrl, REQUEST_POOL)),
      background: storageOver(createPrisma(databaseUrl, BACKGROUND_POOL)),
    };
    fastify.decorate('storage', requests);
    fastify.decorate('backgroundStorage', background);
    fastify.addHook('onClose', async () => {
      await Promise.all([fastify.storage.close(), fastify.backgroundStorage.close()]);
    });
  },
  { name: 'db', fastify: '5.x' },
);
