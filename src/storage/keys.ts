// What a key may do: the lookup every authenticated request makes (hand-written SQL), and for the dashboard and
// callctl (Prisma Client) the account's active key and its rotation, its API access as the lookup sees it, and the
// agents its key may use.
import type pg from 'pg';
import type { Prisma } from '../generated/prisma/client.js';
import type { Principal } from '../domain/principal.js';
import { statement } from './statements.js';
import type { Db } from './db-types.js';

interface PrincipalRow {
  key_id: string;
  account_id: string;
  kind: 'agency' | 'client';
  agency_id: string;
  plan: string;
  api_access_enabled: boolean;
  default_agent_id: string | null;
  d_account_id: string | null;
  d_agency_id: string | null;
  d_phone_number: string | null;
  d_timezone: string | null;
  d_calling_windows: unknown;
  d_outside_window_policy: 'queue' | 'reject' | null;
}

// Hand-written: the hot path (every request, refusals included), a named statement costs a fraction of a Prisma
// query's CPU. It reads the account's default agent too, which most triggers use: it saves them a round trip later.
// Enums are cast to text; pg returns uuids as strings, booleans as booleans and jsonb parsed.
const KEY_LOOKUP = statement(
  'oct_key_lookup',
  `
  SELECT k.id AS key_id, a.id AS account_id, a.kind, COALESCE(a.agency_id, a.id) AS agency_id,
         COALESCE(a.plan, g.plan)::text AS plan,
         (a.api_access_enabled AND COALESCE(g.api_access_enabled, true)) AS api_access_enabled,
         a.default_agent_id, d.account_id AS d_account_id, d.agency_id AS d_agency_id,
         d.phone_number AS d_phone_number, d.timezone AS d_timezone, d.calling_windows AS d_calling_windows,
         d.outside_window_policy::text AS d_outside_window_policy
    FROM api_keys k
    JOIN accounts a ON a.id = k.account_id
    LEFT JOIN accounts g ON g.id = a.agency_id
    LEFT JOIN agents d ON d.id = a.default_agent_id
   WHERE k.digest = $1 AND k.revoked_at IS NULL`,
);

/** The principal of the unrevoked key with this digest, with its account's default agent; null when there is none. */
export async function findPrincipalByKeyDigest(pool: pg.Pool, digest: Buffer): Promise<Principal | null> {
  const [row] = (await pool.query<PrincipalRow>({ ...KEY_LOOKUP, values: [digest] })).rows;
  if (!row) return null;
  return {
    keyId: row.key_id,
    accountId: row.account_id,
    accountKind: row.kind,
    agencyId: row.agency_id,
    plan: row.plan,
    apiAccessEnabled: row.api_access_enabled,
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
          }
        : null,
  };
}

/** The account's active key as people see it (never the key: its display prefix). */
export interface ActiveKey {
  id: string;
  displayPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export async function findActiveKey(db: Db, accountId: string): Promise<ActiveKey | null> {
  return db.apiKey.findFirst({
    where: { accountId, revokedAt: null },
    select: { id: true, displayPrefix: true, createdAt: true, lastUsedAt: true },
  });
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

/** Records when each key was last used. */
export async function touchApiKeys(pool: pg.Pool, uses: { keyId: string; at: Date }[]): Promise<void> {
  await pool.query({ ...TOUCH_KEYS, values: [uses.map((u) => u.keyId), uses.map((u) => u.at)] });
}

// Hand-written: a row lock (SELECT ... FOR UPDATE), which Prisma Client cannot express. The same text as
// storage/accounts.ts's, so one prepared statement name serves both.
const LOCK_ACCOUNT = statement('oct_lock_account', 'SELECT id FROM accounts WHERE id = $1::uuid FOR UPDATE');

/**
 * Revokes the account's active key and stores a new one (its digest only), inside the caller's transaction:
 * rotations of one account are serialised on its row, so exactly one key stays active. With `replaces` (the id of
 * the key the caller saw, or null for none) nothing changes unless that is still the active key: a form sent twice
 * (a reload, a double click) rotates once. Returns the replaced key's prefix, or null when nothing changed.
 */
export async function rotateApiKey(
  tx: Prisma.TransactionClient,
  accountId: string,
  key: { digest: Uint8Array; displayPrefix: string },
  now: Date,
  replaces?: string | null,
): Promise<{ previousPrefix: string | null } | null> {
  await tx.$queryRawUnsafe(LOCK_ACCOUNT.text, accountId);
  const active = await findActiveKey(tx, accountId);
  if (replaces !== undefined && (active?.id ?? null) !== replaces) return null;
  if (active) await tx.apiKey.update({ where: { id: active.id }, data: { revokedAt: now } });
  await tx.apiKey.create({
    data: { accountId, digest: new Uint8Array(key.digest), displayPrefix: key.displayPrefix, createdAt: now },
  });
  return { previousPrefix: active?.displayPrefix ?? null };
}

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

export async function findApiAccessState(db: Db, accountId: string): Promise<ApiAccessState | null> {
  const account = await db.account.findUnique({
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
    plan: account.agency?.plan ?? account.plan,
    accountSwitch: account.apiAccessEnabled,
    agencySwitch: account.agency?.apiAccessEnabled ?? null,
    agencyName: account.agency?.name ?? null,
    defaultAgentId: account.defaultAgentId,
  };
}

export interface UsableAgent {
  id: string;
  name: string;
  phoneNumber: string | null;
  accountId: string;
  accountName: string;
}

/**
 * The agents a key of `account` may use (src/domain/tenancy.ts canUseAgent as a query): its own and, for an agency,
 * its clients'. Ordered by owner then name; at most `limit`.
 */
export async function listUsableAgents(
  db: Db,
  account: { id: string; kind: 'agency' | 'client' },
  limit: number,
): Promise<UsableAgent[]> {
  const rows = await db.agent.findMany({
    where: account.kind === 'agency' ? { agencyId: account.id } : { accountId: account.id },
    orderBy: [{ name: 'asc' }, { id: 'asc' }],
    take: limit,
    select: { id: true, name: true, phoneNumber: true, accountId: true, account: { select: { name: true } } },
  });
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    phoneNumber: r.phoneNumber,
    accountId: r.accountId,
    accountName: r.account.name,
  }));
}

/** The account's own API-access switch (its clients' keys follow an agency's too: see the lookup). */
export async function setApiAccessSwitch(db: Db, accountId: string, enabled: boolean, now: Date): Promise<void> {
  await db.account.update({ where: { id: accountId }, data: { apiAccessEnabled: enabled, updatedAt: now } });
}

/** The agent a trigger without agent_id uses (read by the lookup with the key). */
export async function setDefaultAgentOf(db: Db, accountId: string, agentId: string, now: Date): Promise<void> {
  await db.account.update({ where: { id: accountId }, data: { defaultAgentId: agentId, updatedAt: now } });
}
