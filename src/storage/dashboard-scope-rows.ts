// What the dashboard's scoped reads (dashboard-scope.ts) return and read with: the account and agent rows, Prisma's
// selects for them, and the two statements hand-written for their plans (each says why), run on the pool.
import type { Scope } from '../domain/tenancy.js';
import { likeLiteral, startsWithInAnyCase } from './like.js';
import { SqlRepository } from './driver.js';
import { ownedByKindSql } from './scope-where.js';
import { statement, type Statement } from './statements.js';

export const ACCOUNT_SELECT = { id: true, name: true, kind: true } as const;

/**
 * The rows whose name starts with `text` in any case, at most `limit`, those whose whole name it is first (so that a
 * name that also starts others' can still be chosen): `find` reads with the name condition it is given.
 */
export async function wholeNameFirst<T extends { id: string }>(
  text: string,
  limit: number,
  find: (name: { equals: string; mode: 'insensitive' } | { startsWith: string; mode: 'insensitive' }) => Promise<T[]>,
): Promise<T[]> {
  const [whole, starting] = await Promise.all([
    find({ equals: likeLiteral(text), mode: 'insensitive' }),
    find(startsWithInAnyCase(text)),
  ]);
  const seen = new Set(whole.map((row) => row.id));
  return [...whole, ...starting.filter((row) => !seen.has(row.id))].slice(0, limit);
}

export const AGENT_SELECT = {
  id: true,
  name: true,
  phoneNumber: true,
  accountId: true,
  maxAttempts: true,
  account: { select: { name: true } },
} as const;

/** An agent of a scope as the dashboard's menus and lists show it: with its owner's name. */
export interface ScopeAgent {
  id: string;
  name: string;
  phoneNumber: string | null;
  accountId: string;
  accountName: string;
  maxAttempts: number;
}

export function scopeAgent(r: {
  id: string;
  name: string;
  phoneNumber: string | null;
  accountId: string;
  maxAttempts: number;
  account: { name: string };
}): ScopeAgent {
  return {
    id: r.id,
    name: r.name,
    phoneNumber: r.phoneNumber,
    accountId: r.accountId,
    accountName: r.account.name,
    maxAttempts: r.maxAttempts,
  };
}

/** listAgentsInScope's statement, for a scope of each kind: $1 the scope's account, $2 only usable ones, $3 limit. */
export const AGENTS_BY_NAME = Object.fromEntries(
  (['agency', 'client'] as const).map((kind) => [
    kind,
    statement(
      `oct_scope_agents_by_name_${kind}`,
      `SELECT g.id, g.name, g.phone_number AS "phoneNumber", g.account_id AS "accountId", a.name AS "accountName",
              g.max_attempts AS "maxAttempts"
         FROM agents g JOIN accounts a ON a.id = g.account_id
        WHERE ${ownedByKindSql(kind, 'g', 1)} AND (NOT $2::boolean OR g.archived_at IS NULL)
        ORDER BY g.name, g.id
        LIMIT $3::int`,
    ),
  ]),
) as Record<Scope['kind'], Statement>;

/**
 * findInScopeById's statement: the agents `$1` with their owner's name and agency, and the accounts `$2` with their
 * agency, whoever's they are, each read by its key (one statement for both: the Calls list names its rows' agents and
 * accounts at once).
 */
export const BY_ID = statement(
  'oct_scope_by_id',
  `SELECT 'agent' AS "row", g.id, g.name, g.phone_number AS "phoneNumber", g.account_id AS "accountId",
          g.agency_id AS "agencyId", a.name AS "accountName", g.max_attempts AS "maxAttempts", NULL::text AS kind
     FROM agents g JOIN accounts a ON a.id = g.account_id
    WHERE g.id = ANY ($1::uuid[])
   UNION ALL
   SELECT 'account', a.id, a.name, NULL, a.id, a.agency_id, a.name, NULL, a.kind::text
     FROM accounts a
    WHERE a.id = ANY ($2::uuid[])`,
);

export interface ScopeAccount {
  id: string;
  name: string;
  kind: 'agency' | 'client';
}

/** A row of BY_ID: an agent, or an account (then its own id and name stand as owner's, and `kind` is set). */
export interface ByIdRow extends Omit<ScopeAgent, 'maxAttempts'> {
  row: 'agent' | 'account';
  agencyId: string | null;
  maxAttempts: number | null;
  kind: ScopeAccount['kind'] | null;
}

/** The scoped reads' two statements on the pool. */
export class ScopeStatements extends SqlRepository {
  /** AGENTS_BY_NAME of a scope of `kind`: its account, only usable ones, at most `limit` (null: all). */
  async agentsByName(kind: Scope['kind'], accountId: string, onlyUsable: boolean, limit: number | null) {
    const { rows } = await this.pool.query<ScopeAgent>({
      ...AGENTS_BY_NAME[kind],
      values: [accountId, onlyUsable, limit],
    });
    return rows;
  }

  /** BY_ID's rows for the agents `agentIds` and the accounts `accountIds`, whoever's they are. */
  async byId(agentIds: string[], accountIds: string[]): Promise<ByIdRow[]> {
    return (await this.pool.query<ByIdRow>({ ...BY_ID, values: [agentIds, accountIds] })).rows;
  }
}
