// The storage's one entry point: the storages and their repositories, the database's location, the retention's own
// repository, LISTEN, and the row and value types callers read. Nothing outside src/storage sees pg or Prisma Client.
export { createStorage, createStorages, type Repositories, type Storage, type Storages } from './storage.js';
export { BACKGROUND_POOL, REQUEST_POOL, locateDatabase, type DatabaseLocation } from './database.js';
export { isUniqueViolation, refusedByServer } from './db-types.js';
export { acceptedAccounts, acceptedPayloads, CALLS_CHANNEL, notifiedAccounts, WEBHOOKS_CHANNEL } from './channels.js';
export { ListenConnection, LISTEN_APPLICATION_NAME, type Listener, type ListenerEvents } from './notifications.js';
export {
  createRetention,
  noRowsDeleted,
  RETENTION_STEPS,
  RETENTION_TABLES,
  RetentionRepository,
  type DeletedRows,
  type RetentionCutoffs,
  type RetentionTable,
} from './retention.js';
export {
  type AdvanceDue,
  type CallsToLock,
  type CallBatchAudit,
  type CallBatchDelivery,
  type CallBatchEvent,
  type CallBatch,
  type CallWithMetadataText,
  type DeliveryLease,
  type LiveCallCounts,
  type LockedCall,
  type PlannedBatch,
} from './calls.js';
export type { ClaimCandidate, ClaimPlan } from './call-claims.js';
export type { CarrierInUse, DialCarrier, DialIntent } from './calls-carrier.js';
export type * from './callee-dials.js';
export type * from './accounts.js';
export type * from './agents.js';
export type * from './audit.js';
export type * from './call-history.js';
export type { CallContextRow, CallForResult, ResultWrite } from './call-results.js';
export type * from './deliveries.js';
export type * from './delivery-work.js';
export type * from './do-not-call.js';
export type * from './idempotency.js';
export type * from './keys.js';
export type * from './overview.js';
export type * from './paging.js';
export { AGENT_OUTCOME_PREFIX, noOutcomes } from './overview.js';
export { historyAccounts, NO_CALL_FILTERS } from './call-history.js';
export type * from './dashboard-scope.js';
export { migrate, MigrationError, type MigrateResult } from './migrate.js';
export type * from './sessions.js';
export type * from './users.js';

/** The stored rows and enums callers handle, named here so that nothing outside storage imports the generated client. */
export type { Call as CallRow } from '../generated/prisma/client.js';
export type { AuditActor, Plan, TokenPurpose } from '../generated/prisma/enums.js';
