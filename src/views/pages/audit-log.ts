// The audit-log page's model: what src/views/pages/audit-log.eta reads (with the partials it includes).
import type { KeysOf } from './model-parts.js';

export type AuditLogModel = {
  showAccount: boolean;
  entries: { at: string; who: string; accountName: string; what: string; detail: string; ip: string | null }[];
  olderHref: string | null;
  newestHref: string | null;
};

/** The fields audit-log.eta reads (test/dashboard/page-models.test.ts compares them with the template). */
export const AUDIT_LOG_FIELDS = [
  'showAccount',
  'entries',
  'olderHref',
  'newestHref',
] as const satisfies readonly KeysOf<AuditLogModel>[];
