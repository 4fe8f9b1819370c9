// Audit log: who did what, newest first, 50 a page (keyset: "Older" carries the last entry's time and id). Agency
// users see their clients' entries too; client users their client's.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { describeAuditAction } from '../../domain/audit-actions.js';
import { isAgencyScope } from '../../domain/tenancy.js';
import { AuditLogQuery } from '../../../schemas/dashboard/forms.js';
import { actorWords } from '../../views/format/notices.js';
import { decodeCursor, encodeCursor } from '../../views/format/cursor.js';

const PAGE_SIZE = 50;

const auditLog: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get(
    '/audit-log',
    { config: { role: 'viewer' }, schema: { hide: true, querystring: AuditLogQuery }, attachValidation: true },
    async (request, reply) => {
      const before = (request.query?.before && decodeCursor(request.query.before)) || undefined;
      const { entries, next } = await request.scoped.listAuditInScope({
        before,
        limit: PAGE_SIZE,
      });
      return reply.page('audit-log', {
        title: 'Audit log',
        showAccount: isAgencyScope(request.scope),
        entries: entries.map((e) => ({
          at: request.times.time(e.createdAt),
          who: actorWords(e.actorKind, e.actorEmail),
          accountName: e.accountName,
          what: describeAuditAction(e.action),
          ip: e.ip,
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
};

export default auditLog;
