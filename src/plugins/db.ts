// The Prisma client (over @prisma/adapter-pg, no native engine) as `fastify.prisma`, disconnected on close.
import fp from 'fastify-plugin';
import { createPrisma, type PrismaClient } from '../storage/database.js';

declare module 'fastify' {
  interface FastifyInstance {
    prisma: PrismaClient;
  }
}

export interface DbPluginOptions {
  databaseUrl: string;
}

export default fp<DbPluginOptions>(
  async (fastify, { databaseUrl }) => {
    // Connections open on first use: readiness reports the database, and the app can be built without one
    // (npm run openapi generates the contract from the routes alone).
    const prisma = createPrisma(databaseUrl);
    fastify.decorate('prisma', prisma);
    fastify.addHook('onClose', async () => {
      await prisma.$disconnect();
    });
  },
  { name: 'db', fastify: '5.x' },
);
