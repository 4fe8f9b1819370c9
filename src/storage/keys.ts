// The keys for the dashboard and callctl (Prisma Client): the account's active key and its rotation, its API access
// as the lookup sees it, its default agent. The lookup every request makes is in key-lookup.ts, on the pool.
import { governingPlan } from '../domain/api-access.js';
import { statement } from './statements.js';
import { PrismaRepository } from './driver.js';

/** The account's active key as people see it (never the key: its display prefix). */
export interface ActiveKey {
  id: string;
  displayPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

// Hand-written: a row lock (SELECT ... FOR UPDATE), which Prisma Client cannot express. The same text as
// storage/accounts.ts's, so one prepared statement name serves both.
const LOCK_ACCOUNT = statement('oct_lock_account', 'SELECT id FROM accounts WHERE id = $1::uuid FOR UPDATE');

/** An account's API access as the key lookup decides it: its own switch, its agency's, and the plan (the agency's). */
export interface ApiAccessState {
  kind: 'agency' | 'client';
  plan: string | null;
  accountSwitch: boolean;
  /** The agency's switch, for a client (null for an agency). */
  agencySwitch: boolean | null;
  agencyName: string | null;
  defaultAgentId: string | null;
}

export class KeyRepository extends PrismaRepository {
  async findActiveKey(accountId: string): Promise<ActiveKey | null> {
    return this.prisma.apiKey.findFirst({
      where: { accountId, revokedAt: null },
      select: { id: true, displayPrefix: true, createdAt: true, lastUsedAt: true },
    });
  }

  /**
   * Revokes the account's active key and stores a new one (its digest only), inside the caller's transaction:
   * rotations of one account are serialised on its row, so exactly one key stays active. With `replaces` (the id of
   * the key the caller saw, or null for none) nothing changes unless that is still the active key: a form sent twice
   * (a reload, a double click) rotates once. Returns the replaced key's prefix, or null when nothing changed.
   */
  async rotateApiKey(
    accountId: string,
    key: { digest: Uint8Array; displayPrefix: string },
    now: Date,
    replaces?: string | null,
  ): Promise<{ previousPrefix: string | null } | null> {
    await this.prisma.$queryRawUnsafe(LOCK_ACCOUNT.text, accountId);
    const active = await this.findActiveKey(accountId);
    if (replaces !== undefined && (active?.id ?? null) !== replaces) return null;
    if (active) await this.prisma.apiKey.update({ where: { id: active.id }, data: { revokedAt: now } });
    await this.prisma.apiKey.create({
      data: { accountId, digest: new Uint8Array(key.digest), displayPrefix: key.displayPrefix, createdAt: now },
    });
    return { previousPrefix: active?.displayPrefix ?? null };
  }

  async findApiAccessState(accountId: string): Promise<ApiAccessState | null> {
    const account = await this.prisma.account.findUnique({
      where: { id: accountId },
      select: {
        kind: true,
        plan: true,
        apiAccessEnabled: true,
        defaultAgentId: true,
        agency: { select: { plan: true, apiAccessEnabled: true, name: true } },
      },
    });
    if (!account) return null;
    return {
      kind: account.kind,
      plan: governingPlan(account.plan, account.agency?.plan ?? null),
      accountSwitch: account.apiAccessEnabled,
      agencySwitch: account.agency?.apiAccessEnabled ?? null,
      agencyName: account.agency?.name ?? null,
      defaultAgentId: account.defaultAgentId,
    };
  }

  /** The account's own API-access switch (its clients' keys follow an agency's too: see the lookup). */
  async setApiAccessSwitch(accountId: string, enabled: boolean, now: Date): Promise<void> {
    await this.prisma.account.update({ where: { id: accountId }, data: { apiAccessEnabled: enabled, updatedAt: now } });
  }

  /** The agent a trigger without agent_id uses (read by the lookup with the key). */
  async setDefaultAgentOf(accountId: string, agentId: string, now: Date): Promise<void> {
    await this.prisma.account.update({ where: { id: accountId }, data: { defaultAgentId: agentId, updatedAt: now } });
  }
}

// Free functions over the repository, for the dashboard until it uses fastify.storage.
