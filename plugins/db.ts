// The database as two storages (repositories over Prisma with @prisma/adapter-pg, no native engine), one per
// connection pool: `fastify.storage` for requests, `fastify.backgroundStorage` for background work
// (src/storage/database.ts says why); both closed on close.
import fp from 'fastify-plugin';
import { createPrisma, BACKGROUND_POOL, REQUEST_POOL, type PrismaClient } from '../src/storage/database.js';
import { storageOver, type Storage } from '../src/storage/storage.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The request pool's storage: requests and whatever answers one (short wait for a connection, then 503). */
    storage: Storage;
    /** The background pool's storage: the dispatcher, the simulated dialer, the webhook worker, NOTIFY (waits longer). */
    backgroundStorage: Storage;
    /**
     * The Prisma client under `storage`, for tests' fixtures and assertions only: src/ and plugins/ may not read it
     * (eslint.config.js refuses `.prisma` there), so the service's code goes through the repositories.
     */
    prisma: PrismaClient;
    /** The Prisma client under `backgroundStorage`, for tests only (as `prisma`). */
    backgroundPrisma: PrismaClient;
  }
}

export interface DbPluginOptions {
  databaseUrl: string;
}

export default fp<DbPluginOptions>(
  async (fastify, { databaseUrl }) => {
    // Connections open on first use: readiness reports the database, and the app can be built without one
    // (npm run openapi generates the contract from the routes alone).
    const requests = createPrisma(databaseUrl, REQUEST_POOL);
    const background = createPrisma(databaseUrl, BACKGROUND_POOL);
    fastify.decorate('storage', storageOver(requests));
    fastify.decorate('backgroundStorage', storageOver(background));
    fastify.decorate('prisma', requests);
    fastify.decorate('backgroundPrisma', background);
    fastify.addHook('onClose', async () => {
      await Promise.all([fastify.storage.close(), fastify.backgroundStorage.close()]);
    });
  },
  { name: 'db', fastify: '5.x' },
);
