// Concurrency: hundreds of simultaneous duplicates of one Idempotency-Key across two replicas make exactly one call; concurrent key rotations leave exactly one working key.
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { apiKeyDigest } from '../../src/domain/api-key.js';
import { errorMessage } from '../../schemas/error-codes.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { redisUrl } from '../helpers/database.js';
import { createClientTenant, createTenant, generateKey, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { UNLIMITED, countRows, expectEnvelope, rowDelta } from './helpers.js';

const IN_FLIGHT = errorMessage('IDEMPOTENCY_IN_FLIGHT');
const REUSED = errorMessage('IDEMPOTENCY_KEY_REUSED');
const PARALLEL = 200;

let replicaA: App;
let replicaB: App;
let databaseUrl: string;

beforeAll(async () => {
  // Two replicas on one database (and one Redis when the run has it), as in production: duplicates of one request
  // arriving at different replicas must still make one call.
  const env = { ...UNLIMITED, ...(redisUrl() ? { REDIS_URL: redisUrl()! } : {}) };
  const first = await buildTestApp({ env });
  replicaA = first.app;
  databaseUrl = first.databaseUrl;
  replicaB = (await buildTestApp({ databaseUrl: first.databaseUrl, env })).app;
});

/** The same JSON object with its keys in another order: the same body as far as idempotency is concerned. */
function reordered(body: Record<string, unknown>, seed: number): string {
  const keys = Object.keys(body);
  const order = keys
    .map((k, i) => [k, (i * 7 + seed * 13) % 101] as const)
    .sort((x, y) => x[1] - y[1])
    .map(([k]) => k);
  return `{${order.map((k) => `${JSON.stringify(k)}:${JSON.stringify(body[k])}`).join(',')}}`;
}

interface Outcome {
  status: number;
  body: { success: boolean; call_id?: string; error?: string };
  replayed: boolean;
}

async function fire(
  tenant: Tenant,
  payloads: string[],
  idempotencyKey: string,
  onAnswer: () => void = () => {},
): Promise<Outcome[]> {
  const responses = await Promise.all(
    payloads.map((payload, i) =>
      trigger(i % 2 ? replicaB : replicaA, tenant.key, payload, { 'idempotency-key': idempotencyKey }).finally(
        onAnswer,
      ),
    ),
  );
  return responses.map((res) => ({
    status: res.statusCode,
    body: expectEnvelope(res),
    replayed: res.headers['idempotent-replayed'] === 'true',
  }));
}

const tally = (outcomes: Outcome[]) =>
  outcomes.reduce<Record<string, number>>(
    (t, o) => ({
      ...t,
      [`${o.status}${o.replayed ? ' replayed' : ''}`]: (t[`${o.status}${o.replayed ? ' replayed' : ''}`] ?? 0) + 1,
    }),
    {},
  );

describe(`${PARALLEL} simultaneous triggers with one Idempotency-Key`, () => {
  it.each([
    ['byte-identical bodies', false],
    ['the same body with its keys in different orders', true],
  ])('%s, split over two replicas: exactly one call; every answer is that call (200) or 409', async (name, shuffle) => {
    const tenant = await createTenant(replicaA.storage);
    const body = {
      phone_number: '+14155552671',
      name: 'Ada',
      email: 'ada@example.com',
      metadata: { crm_id: 'L-42', score: 7, vip: true },
    };
    const payloads = Array.from({ length: PARALLEL }, (_, i) => (shuffle ? reordered(body, i) : JSON.stringify(body)));
    const key = `concurrent-${shuffle}-${tenant.accountId}`;
    const before = await countRows(prismaOf(replicaA));

    const outcomes = await fire(tenant, payloads, key);

    const accepted = outcomes.filter((o) => o.status === 200);
    const others = outcomes.filter((o) => o.status !== 200);
    console.log(`${PARALLEL} duplicates (${name}): ${JSON.stringify(tally(outcomes))}`);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(new Set(accepted.map((o) => o.body.call_id)).size).toBe(1);
    // Exactly one answer is the original; every other 200 is a replay of it.
    expect(accepted.filter((o) => !o.replayed)).toHaveLength(1);
    for (const o of others) expect([o.status, o.body]).toEqual([409, { success: false, error: IN_FLIGHT }]);
    expect(rowDelta(before, await countRows(prismaOf(replicaA)))).toEqual({
      calls: 1,
      call_events: 1,
      idempotency_records: 1,
      webhook_deliveries: 0,
    });
    const callId = accepted[0]!.body.call_id!;
    const call = await prismaOf(replicaA).call.findUniqueOrThrow({ where: { id: callId } });
    expect([call.accountId, call.phoneNumber, call.metadata]).toEqual([
      tenant.accountId,
      body.phone_number,
      body.metadata,
    ]);

    // Once everything has settled, a retry (either replica) is a replay of that one call, not a new one.
    for (const replica of [replicaA, replicaB]) {
      const retry = await trigger(replica, tenant.key, reordered(body, 99), { 'idempotency-key': key });
      expect([retry.statusCode, callIdOf(retry), retry.headers['idempotent-replayed']]).toEqual([200, callId, 'true']);
    }
    expect(await prismaOf(replicaA).call.count({ where: { accountId: tenant.accountId } })).toBe(1);
  });

  it(`while the first holds its transaction open, all ${PARALLEL - 1} duplicates are 409 and none makes a call`, async () => {
    // Without help most duplicates arrive after the first has finished and are plain replays. Holding the account
    // row (which acceptance locks) from another session keeps the first request inside its transaction, so every
    // duplicate meets an in-flight reservation: the hardest case for the reservation.
    const tenant = await createTenant(replicaA.storage);
    const body = JSON.stringify({ phone_number: '+14155552671', metadata: { held: true } });
    const locker = new pg.Client({ connectionString: databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      // FOR NO KEY UPDATE blocks acceptance's FOR UPDATE but not the foreign-key checks (FOR KEY SHARE) of the
      // reservation INSERT, so the first request gets its reservation and then waits inside its transaction.
      await locker.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [tenant.accountId]);
      let answered = 0;
      const before = await countRows(prismaOf(replicaA));
      const pending = fire(
        tenant,
        Array.from({ length: PARALLEL }, () => body),
        'held',
        () => answered++,
      );
      // Well inside Prisma's 5 s interactive-transaction timeout, which the first request is spending on the lock.
      const deadline = Date.now() + 4_000;
      while (answered < PARALLEL - 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(answered).toBe(PARALLEL - 1);
      expect(rowDelta(before, await countRows(prismaOf(replicaA)))).toEqual({
        calls: 0,
        call_events: 0,
        idempotency_records: 1,
        webhook_deliveries: 0,
      });
      await locker.query('COMMIT');
      const outcomes = await pending;
      expect(tally(outcomes)).toEqual({ 200: 1, 409: PARALLEL - 1 });
      for (const o of outcomes.filter((x) => x.status === 409))
        expect(o.body).toEqual({ success: false, error: IN_FLIGHT });
      expect(rowDelta(before, await countRows(prismaOf(replicaA)))).toEqual({
        calls: 1,
        call_events: 1,
        idempotency_records: 1,
        webhook_deliveries: 0,
      });
    } finally {
      await locker.end();
    }
  });

  it('two different bodies racing for one key: one call; its body gets 200/409, the other body 422/409', async () => {
    const tenant = await createTenant(replicaA.storage);
    const bodies = [
      { phone_number: '+14155552671', metadata: { v: 1 } },
      { phone_number: '+14155552671', metadata: { v: 2 } },
    ];
    const payloads = Array.from({ length: PARALLEL }, (_, i) => JSON.stringify(bodies[i % 2]));
    const before = await countRows(prismaOf(replicaA));

    const outcomes = await fire(tenant, payloads, 'racing-bodies');

    console.log(`${PARALLEL} with two bodies: ${JSON.stringify(tally(outcomes))}`);
    expect(rowDelta(before, await countRows(prismaOf(replicaA)))).toEqual({
      calls: 1,
      call_events: 1,
      idempotency_records: 1,
      webhook_deliveries: 0,
    });
    const call = await prismaOf(replicaA).call.findFirstOrThrow({ where: { accountId: tenant.accountId } });
    const winner = (call.metadata as { v: number }).v - 1;
    outcomes.forEach((o, i) => {
      if (i % 2 === winner && o.status === 200) expect(o.body.call_id).toBe(call.id);
      else if (i % 2 === winner) expect([o.status, o.body]).toEqual([409, { success: false, error: IN_FLIGHT }]);
      else
        expect([
          [422, { success: false, error: REUSED }],
          [409, { success: false, error: IN_FLIGHT }],
        ]).toContainEqual([o.status, o.body]);
    });
    expect(outcomes.filter((o, i) => i % 2 !== winner && o.status === 422).length).toBeGreaterThan(0);
  });

  it('the same key from two accounts at once: one call per account (keys are scoped to the account)', async () => {
    const agency = await createTenant(replicaA.storage);
    const client = await createClientTenant(replicaA.storage, agency.accountId);
    const body = JSON.stringify({ phone_number: '+14155552671' });
    const before = await countRows(prismaOf(replicaA));
    const [fromAgency, fromClient] = await Promise.all([
      fire(
        agency,
        Array.from({ length: PARALLEL / 2 }, () => body),
        'shared-key',
      ),
      fire(
        client,
        Array.from({ length: PARALLEL / 2 }, () => body),
        'shared-key',
      ),
    ]);
    expect(rowDelta(before, await countRows(prismaOf(replicaA)))).toEqual({
      calls: 2,
      call_events: 2,
      idempotency_records: 2,
      webhook_deliveries: 0,
    });
    for (const [tenant, outcomes] of [
      [agency, fromAgency],
      [client, fromClient],
    ] as const) {
      const ids = new Set(outcomes.filter((o) => o.status === 200).map((o) => o.body.call_id));
      expect(ids.size).toBe(1);
      const call = await prismaOf(replicaA).call.findUniqueOrThrow({ where: { id: [...ids][0]! } });
      expect(call.accountId).toBe(tenant.accountId);
      for (const o of outcomes) expect([200, 409]).toContain(o.status);
    }
  });

  it('racing duplicates of a refused request (403): nothing is remembered, and the key then works for a valid request', async () => {
    const tenant = await createTenant(replicaA.storage);
    const other = await createTenant(replicaA.storage);
    const forbidden = JSON.stringify({ phone_number: '+14155552671', agent_id: other.agentId });
    const before = await countRows(prismaOf(replicaA));
    const outcomes = await fire(
      tenant,
      Array.from({ length: PARALLEL }, () => forbidden),
      'refused-race',
    );
    for (const o of outcomes) expect([403, 409]).toContain(o.status);
    expect(outcomes.some((o) => o.status === 403)).toBe(true);
    expect(rowDelta(before, await countRows(prismaOf(replicaA)))).toEqual({
      calls: 0,
      call_events: 0,
      idempotency_records: 0,
      webhook_deliveries: 0,
    });
    const fixed = await trigger(
      replicaB,
      tenant.key,
      { phone_number: '+14155552671' },
      { 'idempotency-key': 'refused-race' },
    );
    expect([fixed.statusCode, fixed.headers['idempotent-replayed']]).toEqual([200, undefined]);
  });

  it(`${PARALLEL} simultaneous triggers with distinct keys: ${PARALLEL} calls, none lost, none doubled`, async () => {
    const tenant = await createTenant(replicaA.storage);
    const before = await countRows(prismaOf(replicaA));
    const responses = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        trigger(
          i % 2 ? replicaB : replicaA,
          tenant.key,
          { phone_number: '+14155552671', metadata: { i } },
          { 'idempotency-key': `distinct-${i}` },
        ),
      ),
    );
    for (const res of responses) expect(res.statusCode).toBe(200);
    expect(new Set(responses.map((r) => callIdOf(r))).size).toBe(PARALLEL);
    expect(rowDelta(before, await countRows(prismaOf(replicaA)))).toEqual({
      calls: PARALLEL,
      call_events: PARALLEL,
      idempotency_records: PARALLEL,
      webhook_deliveries: 0,
    });
  });
});

describe('concurrent key rotations', () => {
  it('50 simultaneous rotations of one account over two Prisma clients (two accounts at once): one active key each, it works, all others 401', async () => {
    const tenants = [
      await createTenant(replicaA.storage),
      await createClientTenant(replicaA.storage, (await createTenant(replicaA.storage)).accountId),
    ];
    const ROTATIONS = 50;
    // 100 rotations in flight together: half through each replica's Prisma client (separate pools and connections).
    const rotated = await Promise.all(
      tenants.map((t) =>
        Promise.all(
          Array.from({ length: ROTATIONS }, (_, i) =>
            generateKey((i % 2 ? replicaB : replicaA).storage, t.accountId, undefined, { now: new Date() }),
          ),
        ),
      ),
    );

    for (const [n, tenant] of tenants.entries()) {
      const keys = rotated[n]!.map((r) => r.key);
      expect(new Set(keys).size).toBe(ROTATIONS);
      const rows = await prismaOf(replicaA).apiKey.findMany({ where: { accountId: tenant.accountId } });
      expect(rows).toHaveLength(ROTATIONS + 1); // the fixture's key and the 50 new ones
      const active = rows.filter((r) => r.revokedAt === null);
      expect(active).toHaveLength(1);
      const winner = keys.filter((k) => apiKeyDigest(k).equals(Buffer.from(active[0]!.digest)));
      expect(winner).toHaveLength(1);

      // On both replicas: the active key works; every other key ever issued is refused.
      for (const replica of [replicaA, replicaB]) {
        expect((await trigger(replica, winner[0]!)).statusCode).toBe(200);
        const losers = [tenant.key, ...keys.filter((k) => k !== winner[0])];
        const answers = await Promise.all(losers.map((k) => trigger(replica, k)));
        for (const res of answers)
          expect([res.statusCode, expectEnvelope(res)]).toEqual([
            401,
            { success: false, error: errorMessage('INVALID_API_KEY') },
          ]);
      }
      expect(await prismaOf(replicaA).call.count({ where: { accountId: tenant.accountId } })).toBe(2);
    }
  });
});
