// The tenancy rule (src/domain/tenancy.ts `inScope`) as Prisma conditions, for every storage module that reads what a
// scope may see: one definition, so that no read states the rule in its own words.
import type { Prisma } from '../generated/prisma/client.js';
import type { Scope } from '../domain/tenancy.js';

/** The accounts of `scope`, as a query on accounts: an agency's own and its clients', or a client's own. */
export function accountsWhere(scope: Scope): Prisma.AccountWhereInput {
  return scope.kind === 'agency'
    ? { OR: [{ id: scope.accountId }, { agencyId: scope.accountId }] }
    : { id: scope.accountId };
}

/**
 * The clients of `scope`, as a query on accounts: an agency's clients, without the agency's own row (null for a
 * client's scope, which has none). Read on its own, a range of (agency_id, ...) indexes: with the agency's own row in
 * the same condition (accountsWhere's OR), PostgreSQL can no longer read the clients in an index's order.
 */
export function clientsWhere(scope: Scope): Prisma.AccountWhereInput | null {
  return scope.kind === 'agency' ? { agencyId: scope.accountId } : null;
}

/** Rows owned by an account of `scope`, for tables that carry the owner's agency (agents, audit entries). */
export function ownedWhere(scope: Scope): { agencyId: string } | { accountId: string } {
  return scope.kind === 'agency' ? { agencyId: scope.accountId } : { accountId: scope.accountId };
}

/**
 * The same two conditions for hand-written SQL, each taking the two parameters from `$n`, whose values scopeValues
 * gives: the scope's account, and the agency whose clients it sees (null for a client: `agency_id = NULL` is never
 * true). A statement that takes the scope this way runs beside the others rather than after a listing of its ids.
 */
export function accountsSql(alias: string, n: number): string {
  const [own, clients] = accountsSqlHalves(alias, n);
  return `(${own} OR ${clients})`;
}

/**
 * accountsSql's two halves, the scope's own account and its clients, for a statement that asks each on its own: an
 * EXISTS of the own account's row first, the agency's thousand clients only when that finds nothing.
 */
export function accountsSqlHalves(alias: string, n: number): [own: string, clients: string] {
  return [`${alias}.id = $${n}::uuid`, `${alias}.agency_id = $${n + 1}::uuid`];
}

/** ownedWhere for hand-written SQL over a table carrying the owner's account and agency (see accountsSql). */
export function ownedSql(alias: string, n: number): string {
  return `(${alias}.account_id = $${n}::uuid OR ${alias}.agency_id = $${n + 1}::uuid)`;
}

/**
 * ownedWhere for hand-written SQL, for a scope of `kind`, as one condition on `$n` (whose value is the scope's
 * account): a range of an (agency_id, ...) or (account_id, ...) index that can be read in that index's order, which
 * ownedSql's OR cannot. A statement declares one text per kind.
 */
export function ownedByKindSql(kind: Scope['kind'], alias: string, n: number): string {
  return kind === 'agency' ? `${alias}.agency_id = $${n}::uuid` : `${alias}.account_id = $${n}::uuid`;
}

/** The values of accountsSql's and ownedSql's two parameters for `scope`. */
export function scopeValues(scope: Scope): [string, string | null] {
  return [scope.accountId, scope.kind === 'agency' ? scope.accountId : null];
}
