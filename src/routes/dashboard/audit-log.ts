// Audit log: who did what, newest first, 50 a page (keyset: "Older" carries the last entry's time and id). Agency
// users see their clients' entries too; client users their client's.
import type { FastifyInstance } from 'fastify';
import { describeAuditAction } from '../../domain/audit-actions.js';
import { isUuid } from '../../domain/ids.js';
import { requireUser, viewerOf } from '../../../plugins/dashboard/guards.js';
import { AuditLogQuery } from '../../../schemas/dashboard/forms.js';
import { listAuditEntries, type AuditCursor } from '../../storage/audit.js';

const PAGE_SIZE = 50;

export function encodeCursor(cursor: AuditCursor): string {
  return `${cursor.createdAt.toISOString()}_${cursor.id}`;
}

function decodeCursor(value: string | undefined): AuditCursor | undefined {
  const [at, id] = value?.split('_') ?? [];
  if (!at || !id || !isUuid(id) || Number.isNaN(Date.parse(at))) return undefined;
  return { createdAt: new Date(at), id };
}

export default async function auditLog(fastify: FastifyInstance) {
  fastify.get<{ Querystring: AuditLogQuery }>(
    '/audit-log',
    { schema: { hide: true, querystring: AuditLogQuery }, attachValidation: true, preHandler: requireUser },
    async (request, reply) => {
      const viewer = viewerOf(request);
      const scope = viewer.accountKind === 'agency' ? { agencyId: viewer.accountId } : { accountId: viewer.accountId };
      const before = decodeCursor(request.query?.before);
      const { entries, next } = await listAuditEntries(fastify.prisma, scope, { before, limit: PAGE_SIZE });
      return reply.page('audit-log', {
        title: 'Audit log',
        showAccount: viewer.accountKind === 'agency',
        entries: entries.map((e) => ({
          ...e,
          at: e.createdAt
            .toISOString()
            .replace('T', ' ')
            .replace(/\.\d+Z$/, ' UTC'),
          what: describeAuditAction(e.action),
          who:
            e.actorKind === 'user'
              ? (e.actorEmail ?? 'a deleted user')
              : e.actorKind === 'operator'
                ? 'operator (callctl)'
                : 'the service',
          detail:
            e.detail && typeof e.detail === 'object' && Object.keys(e.detail).length > 0
              ? JSON.stringify(e.detail)
              : '-',
        })),
        olderHref: next ? `/dashboard/audit-log?before=${encodeURIComponent(encodeCursor(next))}` : null,
        newestHref: before ? '/dashboard/audit-log' : null,
      });
    },
  );
}
