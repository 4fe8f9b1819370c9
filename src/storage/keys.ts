// What a key may do: the lookup every authenticated request makes (hand-written SQL), and for the dashboard and
// callctl (Prisma Client) the account's active key and its rotation, its API access as the lookup sees it, and the
// agents its key may use.
import { apiAccessOn, governingPlan } from '../domain/api-access.js';
import type { Principal } from '../domain/principal.js';
import type { WindowTimezone } from '../../schemas/vocabulary.js';
import { statement } from './statements.js';
import { Repository } from './driver.js';

interface PrincipalRow {
  key_id: string;
  account_id: string;
  kind: 'agency' | 'client';
  agency_id: string;
  account_plan: string | null;
  agency_plan: string | null;
  account_switch: boolean;
  agency_switch: boolean | null;
  default_agent_id: string | null;
  d_account_id: string | null;
  d_agency_id: string | null;
  d_phone_number: string | null;
  d_timezone: string | null;
  d_calling_windows: unknown;
  d_outside_window_policy: 'queue' | 'reject' | null;
  d_window_timezone: WindowTimezone | null;
}

// Hand-written: the hot path (every request, refusals included), a named statement costs a fraction of a Prisma
// query's CPU. It reads the account's default agent too, which most triggers use: it saves them a round trip later.
// Enums are cast to text; pg returns uuids as strings, booleans as booleans and jsonb parsed. It reads the plans and
// switches as stored: the mapper decides with the API-access rule (src/domain/api-access.ts).
const KEY_LOOKUP = statement(
  'oct_key_lookup',
  `
  SELECT k.id AS key_id, a.id AS account_id, a.kind, COALESCE(a.agency_id, a.id) AS agency_id,
         a.plan::text AS account_plan, g.plan::text AS agency_plan,
         a.api_access_enabled AS account_switch, g.api_access_enabled AS agency_switch,
         a.default_agent_id, d.account_id AS d_account_id, d.agency_id AS d_agency_id,
         d.phone_number AS d_phone_number, d.timezone AS d_timezone, d.calling_windows AS d_calling_windows,
         d.outside_window_policy::text AS d_outside_window_policy, d.window_timezone::text AS d_window_timezone
    FROM api_keys k
    JOIN accounts a ON a.id = k.account_id
    LEFT JOIN accounts g ON g.id = a.agency_id
    LEFT JOIN agents d ON d.id = a.default_agent_id
   WHERE k.digest = $1 AND k.revoked_at IS NULL`,
);

/** The account's active key as people see it (never the key: its display prefix). */
export interface ActiveKey {
  id: string;
  displayPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

// Hand-written: after the response of every authenticated request (at most once a minute per key and process); a
// named statement costs a fraction of a Prisma update. Never moves the time back (replicas write in any order).
const TOUCH_KEYS = statement(
  'oct_touch_keys',
  `
  UPDATE api_keys k SET last_used_at = u.at
    FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, at)
   WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`,
);

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

export class KeyRepository extends Repository {
  /** The principal of the unrevoked key with this digest, with its account's default agent; null when there is none. */
  async findPrincipalByKeyDigest(digest: Buffer): Promise<Principal | null> {
    const [row] = (await this.pool.query<PrincipalRow>({ ...KEY_LOOKUP, values: [digest] })).rows;
    if (!row) return null;
    return {
      keyId: row.key_id,
      accountId: row.account_id,
      accountKind: row.kind,
      agencyId: row.agency_id,
      plan: governingPlan(row.account_plan, row.agency_plan),
      apiAccessEnabled: apiAccessOn(row.account_switch, row.agency_switch),
      defaultAgentId: row.default_agent_id,
      defaultAgent:
        row.default_agent_id && row.d_account_id
          ? {
              id: row.default_agent_id,
              accountId: row.d_account_id,
              agencyId: row.d_agency_id!,
              phoneNumber: row.d_phone_number,
              timezone: row.d_timezone!,
              callingWindows: row.d_calling_windows,
              outsideWindowPolicy: row.d_outside_window_policy!,
              windowTimezone: row.d_window_timezone!,
            }
          : null,
    };
  }

  async findActiveKey(accountId: string): Promise<ActiveKey | null> {
    return this.prisma.apiKey.findFirst({
      where: { accountId, revokedAt: null },
      select: { id: true, displayPrefix: true, createdAt: true, lastUsedAt: true },
    });
  }

  /** Records when each key was last used. */
  async touchApiKeys(uses: { keyId: string; at: Date }[]): Promise<void> {
    await this.pool.query({ ...TOUCH_KEYS, values: [uses.map((u) => u.keyId), uses.map((u) => u.at)] });
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
