// The database as two Prisma clients (over @prisma/adapter-pg, no native engine), one per connection pool:
// `fastify.prisma` for requests, `fastify.backgroundPrisma` for background work (src/storage/database.ts says why);
// both disconnected on close.
import fp from 'fastify-plugin';
import { createDatabase, type PrismaClient } from '../src/storage/database.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The request pool's client: requests and whatever answers one (short wait for a connection, then 503). */
    prisma: PrismaClient;
    /** The background pool's client: the dispatcher, the simulated dialer, the webhook worker, NOTIFY (waits longer). */
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
    const { requests, background } = createDatabase(databaseUrl);
    fastify.decorate('prisma', requests);
    fastify.decorate('backgroundPrisma', background);
    fastify.addHook('onClose', async () => {
      await Promise.all([requests.$disconnect(), background.$disconnect()]);
    });
  },
  { name: 'db', fastify: '5.x' },
);
