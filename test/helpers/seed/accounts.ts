// Accounts, agents, keys and users written straight to the database: many at once, or values no admin function
// writes (test/helpers/seed.ts says when a test writes directly).
import type { Prisma, PrismaClient } from '../../../src/generated/prisma/client.js';
import { bulk, type Db } from './bulk.js';

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

/** An account made in bulk, with its agent (null when none was asked for). */
export interface BulkAccount {
  accountId: string;
  agentId: string | null;
}

export interface BulkClients {
  agencyId: string;
  /** Each client is named this and its number, zero-padded to `digits` (not padded without). */
  prefix: string;
  digits?: number;
  count: number;
  /** The first number (default 1). */
  from?: number;
  /** Each client gets one agent so named; none without. */
  agentName?: string;
}

/**
 * `count` clients of one agency in one statement (a thousand clients: createClient one by one audits each); returns
 * them in number order.
 */
export async function insertClients(db: Db, clients: BulkClients): Promise<BulkAccount[]> {
  return bulk<BulkAccount>(
    db,
    `WITH n AS (SELECT g, gen_random_uuid() AS id FROM generate_series($4::int, $4::int + $3::int - 1) AS g),
          c AS (INSERT INTO accounts (id, kind, name, agency_id, created_at, updated_at)
                SELECT id, 'client', $2 || CASE WHEN $5::int IS NULL THEN g::text ELSE lpad(g::text, $5::int, '0') END,
                       $1::uuid, now(), now()
                  FROM n ORDER BY g RETURNING id),
          a AS (INSERT INTO agents (id, account_id, agency_id, name, phone_number, created_at, updated_at)
                SELECT gen_random_uuid(), n.id, $1::uuid, $6::text, '+14155550100', now(), now()
                  FROM c JOIN n ON n.id = c.id WHERE $6::text IS NOT NULL ORDER BY n.g RETURNING id, account_id)
     SELECT n.id::text AS "accountId", a.id::text AS "agentId" FROM n LEFT JOIN a ON a.account_id = n.id ORDER BY n.g`,
    [
      clients.agencyId,
      clients.prefix,
      clients.count,
      clients.from ?? 1,
      clients.digits ?? null,
      clients.agentName ?? null,
    ],
  );
}

export interface BulkAgencies {
  /** Each agency is named this and its number (1, 2, ...). */
  prefix: string;
  count: number;
  /** Clients of each agency (default none), named `clientPrefix` and their number within it. */
  clientsEach?: number;
  clientPrefix?: string;
  /** Every account made (agencies and clients) gets one agent so named; none without. */
  agentName?: string;
}

/**
 * `count` agencies, with their clients, in one statement: the other tenants a large deployment holds. Returns the
 * agencies (not their clients) in number order.
 */
export async function insertAgencies(db: Db, agencies: BulkAgencies): Promise<BulkAccount[]> {
  return bulk<BulkAccount>(
    db,
    `WITH n AS (SELECT g, gen_random_uuid() AS id FROM generate_series(1, $2::int) AS g),
          ag AS (INSERT INTO accounts (id, kind, name, plan, created_at, updated_at)
                 SELECT id, 'agency', $1 || g, 'agency', now(), now() FROM n ORDER BY g RETURNING id),
          c AS (INSERT INTO accounts (id, kind, name, agency_id, created_at, updated_at)
                SELECT gen_random_uuid(), 'client', $4 || g, ag.id, now(), now()
                  FROM ag, generate_series(1, $3::int) AS g RETURNING id, agency_id),
          a AS (INSERT INTO agents (id, account_id, agency_id, name, phone_number, created_at, updated_at)
                SELECT gen_random_uuid(), id, coalesce(agency_id, id), $5::text, '+14155550100', now(), now()
                  FROM (SELECT id, agency_id FROM c UNION ALL SELECT id, NULL FROM ag) AS owners WHERE $5::text IS NOT NULL
                RETURNING id, account_id)
     SELECT n.id::text AS "accountId", a.id::text AS "agentId" FROM n LEFT JOIN a ON a.account_id = n.id ORDER BY n.g`,
    [
      agencies.prefix,
      agencies.count,
      agencies.clientsEach ?? 0,
      agencies.clientPrefix ?? '',
      agencies.agentName ?? null,
    ],
  );
}

/** A signing key as an earlier release stored it (in clear): no release of this one writes it so. */
export function insertClearSigningKey(prisma: PrismaClient, purpose: string, key: string) {
  return prisma.signingKey.create({ data: { purpose, key } });
}
