// The service's storage: one repository per aggregate over one pool, and `transaction(fn)` handing the Prisma
// repositories, scoped to the transaction, to a caller. Made once per pool (src/storage/database.ts says why two).
import type { PrismaClient } from '../generated/prisma/client.js';
import { AccountRepository } from './accounts.js';
import { AgentRepository } from './agents.js';
import { AuditRepository } from './audit.js';
import { ClaimRepository } from './call-claims.js';
import { CallHistoryRepository } from './call-history.js';
import { CallResultRepository } from './call-results.js';
import { CallRepository } from './calls.js';
import { CarrierRepository } from './carriers.js';
import { ScopedReadRepository } from './dashboard-scope.js';
import { BACKGROUND_POOL, createPrisma, REQUEST_POOL, sqlPool, type PrismaOptions } from './database.js';
import { DeliveryRepository } from './deliveries.js';
import { DeliveryWorkRepository } from './delivery-work.js';
import { DoNotCallRepository } from './do-not-call.js';
import { PooledDoNotCallRepository } from './do-not-call-import.js';
import type { PoolDriver, TransactionDriver } from './driver.js';
import { EndpointRepository } from './endpoints.js';
import { HealthRepository } from './health.js';
import { IdempotencyRepository } from './idempotency.js';
import { KeyLookupRepository } from './key-lookup.js';
import { KeyRepository } from './keys.js';
import { NotificationRepository } from './notifications.js';
import { OverviewRepository } from './overview.js';
import { SessionRepository } from './sessions.js';
import { SecretVault } from './secrets.js';
import { SealedSecretRepository } from './sealed-secrets.js';
import { SigningKeyRepository } from './signing-keys.js';
import { TokenRepository } from './tokens.js';
import { UserRepository } from './users.js';

/**
 * The repositories a transaction hands out: Prisma repositories, whose every statement runs on their driver, so
 * inside `transaction(fn)` on the transaction's connection. A pool repository is not here, so a statement outside the
 * transaction does not compile.
 */
export interface Repositories {
  readonly accounts: AccountRepository;
  readonly agents: AgentRepository;
  readonly audit: AuditRepository;
  /** The accounts' own carriers, their credentials sealed. */
  readonly carriers: CarrierRepository;
  /** Held deliveries released, the operator's replays and resends, the delivery log. */
  readonly deliveries: DeliveryRepository;
  /** The accounts' do-not-call lists. */
  readonly doNotCall: DoNotCallRepository;
  readonly endpoints: EndpointRepository;
  readonly idempotency: IdempotencyRepository;
  /** API keys and the API-access switch. */
  readonly keys: KeyRepository;
  readonly sessions: SessionRepository;
  /** Keys the service signs with (the runtime's context tokens). */
  readonly signingKeys: SigningKeyRepository;
  /** One-time tokens (invitations, password resets). */
  readonly tokens: TokenRepository;
  readonly users: UserRepository;
}

export interface Storage extends Repositories {
  /** The Prisma repository and the request path's key lookup and touch (key-lookup.ts). */
  readonly keys: KeyLookupRepository;
  /** The Prisma repository and the webhook worker's claims and attempt records (delivery-work.ts). */
  readonly deliveries: DeliveryWorkRepository;
  /** The Prisma repository and an import's writes (do-not-call-import.ts). */
  readonly doNotCall: PooledDoNotCallRepository;
  /** The calls: acceptance, the transition transaction, reads for callctl and the API. */
  readonly calls: CallRepository;
  /** The dispatcher's side of the calls: the claim transaction, leases, intents, stale claims, expiries. */
  readonly claims: ClaimRepository;
  /** The dashboard's reads of the calls: history, filters, one call's detail. */
  readonly history: CallHistoryRepository;
  /** The dashboard's overview: accounts, outcomes, endpoint health. */
  readonly overview: OverviewRepository;
  /** The runtime's side of a call: its context, and its result recorded under the call's lock. */
  readonly results: CallResultRepository;
  /** NOTIFY outside any transaction. */
  readonly notifications: NotificationRepository;
  /** The dashboard's reads, each taking the viewer's scope (src/domain/tenancy.ts): the one tenancy rule as queries. */
  readonly scoped: ScopedReadRepository;
  /** Every column of sealed values at once: start-up sealing, the keys in use, the rotation (sealed-secrets.ts). */
  readonly sealedSecrets: SealedSecretRepository;
  /** Seals what the repositories write and opens what they read, with the box given to `secrets.use` (secrets.ts). */
  readonly secrets: SecretVault;
  /**
   * Runs `fn` in one Prisma interactive transaction, handing it the Prisma repositories over the transaction's client.
   * The pool repositories (calls.transition, claims.claimDue, ...) own their transactions and are not in its type.
   * `timeoutMs`: how long `fn` may take (Prisma's default, 5 s, unless a long write such as an import says more).
   */
  transaction<T>(fn: (tx: Repositories) => Promise<T>, options?: { timeoutMs?: number }): Promise<T>;
  /** Resolves when the database answers a statement on this storage's pool; rejects with the driver's error. */
  ping(): Promise<void>;
  /** Closes the pool (and the Prisma client over it). */
  close(): Promise<void>;
  /** Statements waiting for a connection of this storage's pool (pg-pool's documented `waitingCount`). */
  readonly waitingCount: number;
}

/** The Prisma repositories over the client or a transaction. */
function repositories(driver: TransactionDriver): Repositories {
  return {
    accounts: new AccountRepository(driver),
    agents: new AgentRepository(driver),
    audit: new AuditRepository(driver),
    carriers: new CarrierRepository(driver),
    deliveries: new DeliveryRepository(driver),
    doNotCall: new DoNotCallRepository(driver),
    endpoints: new EndpointRepository(driver),
    idempotency: new IdempotencyRepository(driver),
    keys: new KeyRepository(driver),
    sessions: new SessionRepository(driver),
    signingKeys: new SigningKeyRepository(driver),
    tokens: new TokenRepository(driver),
    users: new UserRepository(driver),
  };
}

const storages = new WeakMap<PrismaClient, Storage>();

/** The storage over a client made by createPrisma (one per client). */
export function storageOver(prisma: PrismaClient): Storage {
  const existing = storages.get(prisma);
  if (existing) return existing;
  const secrets = new SecretVault();
  const driver: PoolDriver = { prisma, pool: sqlPool(prisma), secrets };
  const health = new HealthRepository(driver);
  const storage: Storage = {
    ...repositories(driver),
    keys: new KeyLookupRepository(driver),
    deliveries: new DeliveryWorkRepository(driver),
    doNotCall: new PooledDoNotCallRepository(driver),
    calls: new CallRepository(driver),
    claims: new ClaimRepository(driver),
    history: new CallHistoryRepository(driver),
    overview: new OverviewRepository(driver),
    results: new CallResultRepository(driver),
    notifications: new NotificationRepository(driver),
    scoped: new ScopedReadRepository(driver),
    sealedSecrets: new SealedSecretRepository(driver),
    secrets,
    transaction: (fn, options) =>
      prisma.$transaction(
        (tx) => fn(repositories({ prisma: tx, secrets })),
        options?.timeoutMs === undefined ? undefined : { timeout: options.timeoutMs },
      ),
    ping: () => health.ping(),
    close: () => prisma.$disconnect(),
    get waitingCount() {
      return driver.pool.waitingCount;
    },
  };
  storages.set(prisma, storage);
  return storage;
}

/** A storage on a pool of its own (`options`: its size and wait; REQUEST_POOL or BACKGROUND_POOL for the service). */
export function createStorage(databaseUrl: string, options: PrismaOptions = {}): Storage {
  return storageOver(createPrisma(databaseUrl, options));
}

/** The service's two storages, one per pool (REQUEST_POOL says why); both closed by whoever made them. */
export interface Storages {
  /** For requests and whatever answers one: the key lookup, acceptance, callbacks, readiness. */
  requests: Storage;
  /** For background work: the dispatcher, the simulated dialer, the webhook worker, NOTIFY after a commit. */
  background: Storage;
}

export function createStorages(databaseUrl: string): Storages {
  return {
    requests: createStorage(databaseUrl, REQUEST_POOL),
    background: createStorage(databaseUrl, BACKGROUND_POOL),
  };
}
