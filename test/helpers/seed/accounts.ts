// Accounts, agents, keys and users written straight to the database: many at once, or values no admin function
// writes (test/helpers/seed.ts says when a test writes directly).
import type { Prisma, PrismaClient } from '../../../src/generated/prisma/client.js';

/**
 * Agent values the forms and callctl refuse (a retry wait of zero minutes, the callee's zone for an agent without a
 * window, a time zone stored as an older release wrote it): a test of what the service does with such a row.
 */
export function forceAgent(prisma: PrismaClient, id: string, data: Prisma.AgentUncheckedUpdateInput) {
  return prisma.agent.update({ where: { id }, data });
}

/** Account values no admin function writes (an agency whose default agent is a client's, as an older release allowed). */
export function forceAccount(prisma: PrismaClient, id: string, data: Prisma.AccountUncheckedUpdateInput) {
  return prisma.account.update({ where: { id }, data });
}

/** A key row as written, with a display prefix of the test's choosing (a generated key's is random). */
export function insertApiKeyRow(prisma: PrismaClient, args: Prisma.ApiKeyCreateArgs) {
  return prisma.apiKey.create(args);
}

/** Many accounts at once (hundreds of clients for a paged list: createClient one by one audits each). */
export function insertAccountRows(prisma: PrismaClient, args: Prisma.AccountCreateManyArgs) {
  return prisma.account.createMany(args);
}

/** Many agents at once (see insertAccountRows). */
export function insertAgentRows(prisma: PrismaClient, args: Prisma.AgentCreateManyArgs) {
  return prisma.agent.createMany(args);
}

/** A user row as written: one that never had a password nor a link (no admin function makes one without a link). */
export function insertUserRow(prisma: PrismaClient, args: Prisma.UserUncheckedCreateInput) {
  return prisma.user.create({ data: args });
}

/** Users changed in place (disabled at a given instant without an actor, a state a session must then meet). */
export function forceUsers(prisma: PrismaClient, args: Prisma.UserUpdateManyArgs) {
  return prisma.user.updateMany(args);
}
