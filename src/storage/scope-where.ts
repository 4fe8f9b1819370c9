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

/** Rows owned by an account of `scope`, for tables that carry the owner's agency (agents, audit entries). */
export function ownedWhere(scope: Scope): { agencyId: string } | { accountId: string } {
  return scope.kind === 'agency' ? { agencyId: scope.accountId } : { accountId: scope.accountId };
}
