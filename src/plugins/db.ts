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
    const prisma = createPrisma(databaseUrl);
    await prisma.$connect();
    fastify.decorate('prisma', prisma);
    fastify.addHook('onClose', async () => {
      await prisma.$disconnect();
    });
  },
  { name: 'db', fastify: '5.x' },
);
