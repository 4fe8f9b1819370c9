// Secrets at rest against the real database: a dump alone reveals no secret, an upgrade seals the clear secrets of an
// earlier release (twice at once too), a start without the key that sealed them is refused, and `callctl secrets
// rotate` re-wraps them under a new key while replicas on either side of the rotation read them.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CONTEXT_TOKEN_KEY_PURPOSE } from '../../plugins/context-tokens.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { loadConfig } from '../../src/config.js';
import { SecretBox, sealedKeyId, secretsKeyId } from '../../src/domain/secret-box.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { loadSecrets, type LoadedSecrets } from '../../src/secrets/keys.js';
import { prepareStoredSecrets, SecretsKeyRefused } from '../../src/secrets/stored-secrets.js';
import { sqlPool } from '../../src/storage/database.js';
import { createStorage, type Storage } from '../../src/storage/index.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl } from '../helpers/cli.js';
import { freshDatabase, freshPrisma } from '../helpers/database.js';
import { match } from '../helpers/matchers.js';
import { atFileEnd } from '../helpers/file-end.js';
import { createTenant } from '../helpers/fixtures.js';
import { forceEndpoint, insertClearSigningKey, insertEndpointRows, lockWaiters } from '../helpers/seed.js';
import { startServer } from '../helpers/server-process.js';
import { waitFor } from '../helpers/wait.js';
import { WebhookSender } from '../../src/webhooks/sender.js';

const newKey = () => randomBytes(32).toString('base64');
const loaded = (current: string, previous: string[] = []): LoadedSecrets =>
  loadSecrets(
    loadConfig({
      SECRETS_KEY: current,
      ...(previous.length ? { SECRETS_KEY_PREVIOUS: previous.join(',') } : {}),
    }),
  );

const storages: Storage[] = [];
atFileEnd(async () => {
  for (const storage of storages.splice(0)) await storage.close();
});
function storageOn(url: string): Storage {
  const storage = createStorage(url, { max: 2 });
  storages.push(storage);
  return storage;
}

async function storedValues(prisma: PrismaClient) {
  const endpoints = await prisma.webhookEndpoint.findMany({ select: { accountId: true, secret: true } });
  const keys = await prisma.signingKey.findMany({ select: { purpose: true, key: true } });
  return [...endpoints.map((e) => e.secret), ...keys.map((k) => k.key)];
}

/**
 * The whole database as text: /usr/bin/pg_dump, or, where it is older than the server (pass 1's embedded PostgreSQL
 * is newer than the machine's client, which refuses to dump it), every row of every table as PostgreSQL prints it.
 */
async function dumpDatabase(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const server = Number((await client.query<{ v: string }>('SHOW server_version_num')).rows[0]!.v) / 10_000;
    const { stdout: version } = await promisify(execFile)('/usr/bin/pg_dump', ['--version']).catch(() => ({
      stdout: '',
    }));
    const dumpMajor = Number(/(\d+)\.\d+/.exec(version)?.[1] ?? 0);
    if (dumpMajor >= Math.floor(server)) {
      const { stdout } = await promisify(execFile)('/usr/bin/pg_dump', ['--dbname', url], {
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout;
    }
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
        WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
    );
    const parts: string[] = [];
    for (const { name } of tables) {
      const { rows } = await client.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t`);
      parts.push(`-- ${name}`, ...rows.map((r) => r.row));
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}

describe('a database dump', () => {
  it("holds no webhook signing secret and no context tokens' key, only sealed values", async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const { secret } = await setWebhook(app.storage, tenant.accountId, 'https://hooks.example.com/calls', {
      allowPrivate: false,
      now: app.now(),
    });
    // The context tokens' key is made on first use, as a dial does.
    await app.contextTokens.sign('0b9e7a4c-5d1f-4e44-9f5e-3c1f0a2b4d6e', 1);
    const contextKey = await app.storage.signingKeys.ensureKey(CONTEXT_TOKEN_KEY_PURPOSE, newKey(), app.now());
    const dump = await dumpDatabase(databaseUrl);
    // The rows are in the dump, sealed: the check can fail.
    expect(dump).toContain('webhook_endpoints');
    expect(dump.match(/sealed\.v1\.[0-9a-f]{16}\./g)?.length).toBeGreaterThanOrEqual(2);
    for (const clear of [
      secret,
      secret.slice('whsec_'.length),
      Buffer.from(secret.slice('whsec_'.length), 'base64').toString('hex'),
      contextKey,
      Buffer.from(contextKey, 'base64').toString('hex'),
      Buffer.from(contextKey, 'base64').toString('base64url'),
    ])
      expect(dump).not.toContain(clear);
  });
});

describe('an upgrade from a release that stored secrets in clear', () => {
  it('seals every clear secret at start, once, with two replicas starting at the same moment', async () => {
    const { prisma, url } = await freshPrisma();
    const tenants = await Promise.all(Array.from({ length: 7 }, () => createTenant(storageOn(url))));
    const secrets = tenants.map(() => generateWebhookSecret());
    await insertEndpointRows(prisma, {
      data: tenants.map((t, i) => ({
        accountId: t.accountId,
        url: `https://hooks.example.com/${i}`,
        secret: secrets[i]!,
      })),
    });
    const contextKey = newKey();
    await insertClearSigningKey(prisma, CONTEXT_TOKEN_KEY_PURPOSE, contextKey);
    const key = newKey();
    const [one, two] = await Promise.all([
      prepareStoredSecrets(storageOn(url), loaded(key)),
      prepareStoredSecrets(storageOn(url), loaded(key)),
    ]);
    // Each value sealed by one replica or the other, never both (the second's compare-and-set finds it changed).
    expect(one.sealed + two.sealed).toBe(8);
    const stored = await storedValues(prisma);
    expect(stored.every((value) => sealedKeyId(value) === secretsKeyId(Buffer.from(key, 'base64')))).toBe(true);
    // A third start finds nothing to seal, and the values open where they live.
    const reader = storageOn(url);
    expect(await prepareStoredSecrets(reader, loaded(key))).toEqual({ sealed: 0 });
    for (const [i, tenant] of tenants.entries())
      expect((await reader.endpoints.findEndpointOfAccount(tenant.accountId))?.secret).toBe(secrets[i]);
    expect(await reader.signingKeys.ensureKey(CONTEXT_TOKEN_KEY_PURPOSE, newKey(), new Date())).toBe(contextKey);
  });

  it('callctl migrate seals them too, and says how many', async () => {
    const { prisma, url } = await freshPrisma();
    await insertClearSigningKey(prisma, CONTEXT_TOKEN_KEY_PURPOSE, newKey());
    const key = newKey();
    const run = await callctl(url, ['migrate', '--json'], { SECRETS_KEY: key });
    expect(run.stderr).toBe('');
    expect(run.json()).toMatchObject({ applied: [], secrets_sealed: 1 });
    expect((await callctl(url, ['migrate', '--json'], { SECRETS_KEY: key })).json()).toMatchObject({
      secrets_sealed: 0,
    });
    expect(sealedKeyId((await storedValues(prisma))[0]!)).toBe(secretsKeyId(Buffer.from(key, 'base64')));
  });
});

describe('a start without the key that sealed the stored secrets', () => {
  it('is refused, naming SECRETS_KEY, by the start-up check and by callctl', async () => {
    const { url } = await freshPrisma();
    const sealer = storageOn(url);
    const key = newKey();
    await prepareStoredSecrets(sealer, loaded(key));
    await createTenant(sealer).then((t) =>
      setWebhook(sealer, t.accountId, 'https://hooks.example.com/x', { allowPrivate: false, now: new Date() }),
    );
    const other = newKey();
    const refused = prepareStoredSecrets(storageOn(url), loaded(other));
    await expect(refused).rejects.toThrow(SecretsKeyRefused);
    await expect(refused).rejects.toThrow(
      new RegExp(`1 under key id ${secretsKeyId(Buffer.from(key, 'base64'))}.*Set SECRETS_KEY to the key`),
    );
    // With the key among the previous ones it starts.
    await expect(prepareStoredSecrets(storageOn(url), loaded(other, [key]))).resolves.toEqual({ sealed: 0 });
    const cli = await callctl(url, ['calls', 'list', '00000000-0000-4000-8000-000000000000', '--json'], {
      SECRETS_KEY: other,
    });
    expect(cli.code).toBe(1);
    expect((JSON.parse(cli.stderr) as { error: string }).error).toMatch(/sealed with a key this process does not have/);
  });

  it('stops the server before it listens: without SECRETS_KEY, a key file of its own does not open them', async () => {
    const { url } = await freshDatabase();
    const sealer = storageOn(url);
    await prepareStoredSecrets(sealer, loaded(newKey()));
    await createTenant(sealer).then((t) =>
      setWebhook(sealer, t.accountId, 'https://hooks.example.com/x', { allowPrivate: false, now: new Date() }),
    );
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oct-secrets-'));
    atFileEnd(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const start = startServer({ DATABASE_URL: url, DATA_DIR: dataDir, SECRETS_KEY: '', LOG_FORMAT: 'json' });
    await expect(start).rejects.toThrow(/server exited \(1\) before ready/);
    await expect(start).rejects.toThrow(
      /failed to start: The database holds secrets sealed with a key this process does not have .*SECRETS_KEY is not set, and .*secrets\.key holds key id/,
    );
    // The key file it made is its own: 0600, in DATA_DIR.
    expect(fs.statSync(path.join(dataDir, 'secrets.key')).mode & 0o777).toBe(0o600);
  });
});

describe('a sealed value copied to another row', () => {
  it('does not open there: the read names the place, and a delivery signed with it fails its attempt', async () => {
    const { app } = await buildTestApp();
    const [a, b] = [await createTenant(app.storage), await createTenant(app.storage)];
    for (const tenant of [a, b])
      await setWebhook(app.storage, tenant.accountId, 'https://hooks.example.com/x', {
        allowPrivate: false,
        now: app.now(),
      });
    const prisma = prismaOf(app);
    const stolen = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { accountId: a.accountId } });
    // A state no user can reach: someone with write access to the database copies A's secret into B's row.
    await forceEndpoint(prisma, { accountId: b.accountId }, { secret: stolen.secret });
    await expect(app.storage.endpoints.findEndpointOfAccount(b.accountId)).rejects.toThrow(
      `the sealed value of webhook_endpoints.secret:${b.accountId} does not open`,
    );
    const sender = new WebhookSender({ allowPrivateTargets: true });
    const result = await sender.send({ url: 'http://127.0.0.1:9/', secret: '' }, 'msg_1', '{}', app.now());
    expect(result).toMatchObject({ status: null, error: match.stringMatching(/^cannot sign: .*SECRETS_KEY/) });
  });
});

describe('callctl secrets rotate', () => {
  it('re-wraps every stored secret under the new key; replicas on either side of the rotation read them', async () => {
    const [oldKey, nextKey] = [newKey(), newKey()];
    const { app: before } = await buildTestApp({ env: { SECRETS_KEY: oldKey } });
    const url = before.config.DATABASE_URL!;
    const prisma = prismaOf(before);
    const first = await createTenant(before.storage);
    const { secret: firstSecret } = await setWebhook(before.storage, first.accountId, 'https://hooks.example.com/1', {
      allowPrivate: false,
      now: before.now(),
    });
    const contextKey = await before.storage.signingKeys.ensureKey(CONTEXT_TOKEN_KEY_PURPOSE, newKey(), before.now());

    // Step 1: every replica can read the new key; step 2: the new key is current where the old one is readable.
    const { app: behind } = await buildTestApp({
      databaseUrl: url,
      env: { SECRETS_KEY: oldKey, SECRETS_KEY_PREVIOUS: nextKey },
    });
    const { app: ahead } = await buildTestApp({
      databaseUrl: url,
      env: { SECRETS_KEY: nextKey, SECRETS_KEY_PREVIOUS: oldKey },
    });
    const second = await createTenant(ahead.storage);
    const { secret: secondSecret } = await setWebhook(ahead.storage, second.accountId, 'https://hooks.example.com/2', {
      allowPrivate: false,
      now: ahead.now(),
    });
    // A replica still sealing with the old key opens what one with the new key current sealed, and the reverse.
    expect((await behind.storage.endpoints.findEndpointOfAccount(second.accountId))?.secret).toBe(secondSecret);
    expect((await ahead.storage.endpoints.findEndpointOfAccount(first.accountId))?.secret).toBe(firstSecret);

    // Step 3: the rotation, while they run.
    const env = { SECRETS_KEY: nextKey, SECRETS_KEY_PREVIOUS: oldKey };
    const rotate = await callctl(url, ['secrets', 'rotate', '--json'], env);
    expect(rotate.stderr).toBe('');
    const nextId = secretsKeyId(Buffer.from(nextKey, 'base64'));
    // The first endpoint's secret and the context tokens' key were under the old key; the second already under the new.
    expect(rotate.json()).toEqual({ rotated: 2, sealed: 0, key_id: nextId, remaining: 0 });
    expect((await storedValues(prisma)).map(sealedKeyId)).toEqual([nextId, nextId, nextId]);
    expect((await callctl(url, ['secrets', 'rotate', '--json'], env)).json()).toMatchObject({ rotated: 0 });

    // Step 4: the old key dropped: everything opens with the new key alone.
    const { app: after } = await buildTestApp({ databaseUrl: url, env: { SECRETS_KEY: nextKey } });
    expect((await after.storage.endpoints.findEndpointOfAccount(first.accountId))?.secret).toBe(firstSecret);
    expect((await after.storage.endpoints.findEndpointOfAccount(second.accountId))?.secret).toBe(secondSecret);
    expect(await after.storage.signingKeys.ensureKey(CONTEXT_TOKEN_KEY_PURPOSE, newKey(), after.now())).toBe(
      contextKey,
    );
    const old = new SecretBox(Buffer.from(oldKey, 'base64'));
    const firstStored = (await storedValues(prisma))[0]!;
    expect(() => old.open(firstStored, `webhook_endpoints.secret:${first.accountId}`)).toThrow(/neither SECRETS_KEY/);
  });

  it('never overwrites a secret a writer changed while the rotation read the old one', async () => {
    const [oldKey, nextKey] = [newKey(), newKey()];
    const { url, prisma } = await freshPrisma();
    const before = storageOn(url);
    before.secrets.use(loaded(oldKey).box);
    const tenant = await createTenant(before);
    await setWebhook(before, tenant.accountId, 'https://hooks.example.com/x', { allowPrivate: false, now: new Date() });
    const place = `webhook_endpoints.secret:${tenant.accountId}`;
    const next = loaded(nextKey, [oldKey]);
    const written = next.box.seal(generateWebhookSecret(), place);
    // A writer (a replica setting a new secret) holds the row, its change not yet committed, while the rotation runs.
    const writer = new pg.Client({ connectionString: url });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query('UPDATE webhook_endpoints SET secret = $1 WHERE account_id = $2', [written, tenant.accountId]);
      const rotator = storageOn(url);
      rotator.secrets.use(next.box);
      const rotation = rotator.sealedSecrets.rewrapAll();
      await waitFor(
        () => lockWaiters(sqlPool(prisma)),
        (n) => n > 0,
      );
      await writer.query('COMMIT');
      // Its compare-and-set found the value changed: nothing re-wrapped, the writer's secret kept.
      expect(await rotation).toBe(0);
    } finally {
      await writer.end();
    }
    expect((await storedValues(prisma))[0]).toBe(written);
  });
});
