// The audit_log table: who did what to an account, newest first per account or per agency (keyset pages).
// Prisma Client.
import type { Prisma } from '../generated/prisma/client.js';
import type { AuditActor } from '../generated/prisma/enums.js';
import { PrismaRepository } from './driver.js';

export interface AuditRecord {
  accountId: string;
  /** The agency at the top of the account (the account itself for an agency). */
  agencyId: string;
  actorKind: AuditActor;
  actorUserId: string | null;
  action: string;
  detail?: Record<string, unknown>;
  ip?: string | null;
  at: Date;
}

/** Whose entries: an agency's own and its clients' (agencyId), or one account's (accountId). */
export type AuditScope = { agencyId: string } | { accountId: string };

/** Where a page starts: the entry before which (newest first) the next page begins. */
export interface AuditCursor {
  createdAt: Date;
  id: string;
}

export interface AuditListEntry {
  id: string;
  createdAt: Date;
  action: string;
  actorKind: AuditActor;
  actorEmail: string | null;
  accountId: string;
  accountName: string;
  detail: unknown;
  ip: string | null;
}

export class AuditRepository extends PrismaRepository {
  async insertAuditEntry(entry: AuditRecord): Promise<void> {
    await this.prisma.auditEntry.create({
      data: {
        accountId: entry.accountId,
        agencyId: entry.agencyId,
        actorKind: entry.actorKind,
        actorUserId: entry.actorUserId,
        action: entry.action,
        detail: (entry.detail ?? {}) as Prisma.InputJsonObject,
        ip: entry.ip ?? null,
        createdAt: entry.at,
      },
    });
  }

  /**
   * One page, newest first, and the cursor of the next page (null at the end). Keyset on (created_at, id), which the
   * (account_id|agency_id, created_at, id) indexes serve in order: the cost does not grow with the page number.
   */
  async listAuditEntries(
    scope: AuditScope,
    page: { before?: AuditCursor; limit: number },
  ): Promise<{ entries: AuditListEntry[]; next: AuditCursor | null }> {
    const before = page.before
      ? {
          OR: [
            { createdAt: { lt: page.before.createdAt } },
            { createdAt: page.before.createdAt, id: { lt: page.before.id } },
          ],
        }
      : {};
    const rows = await this.prisma.auditEntry.findMany({
      where: { ...scope, ...before },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: page.limit + 1,
      select: {
        id: true,
        createdAt: true,
        action: true,
        actorKind: true,
        accountId: true,
        detail: true,
        ip: true,
        actorUser: { select: { email: true } },
        account: { select: { name: true } },
      },
    });
    const entries = rows.slice(0, page.limit).map((row) => ({
      id: row.id,
      createdAt: row.createdAt,
      action: row.action,
      actorKind: row.actorKind,
      actorEmail: row.actorUser?.email ?? null,
      accountId: row.accountId,
      accountName: row.account.name,
      detail: row.detail,
      ip: row.ip,
    }));
    const last = entries.at(-1);
    return { entries, next: rows.length > page.limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
