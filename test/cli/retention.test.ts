// callctl retention run: one pass now on the server's database, rows deleted per table (JSON and for people); it
// deletes nothing while another process holds the retention lock, and says so.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callctl, type CliError } from '../helpers/cli.js';
import { json } from '../helpers/json.js';
import { createPrisma, sqlPool, type PrismaClient } from '../../src/storage/database.js';
import { createRetentionPool, tryRetentionLock } from '../../src/storage/retention.js';
import { freshDatabase } from '../helpers/database.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { bulkInsertIdempotencyRecords, insertEndedCalls } from '../helpers/seed.js';

const DAY = 24 * 60 * 60 * 1000;

let url: string;
let prisma: PrismaClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ url } = await freshDatabase());
  prisma = createPrisma(url, { max: 2 });
  tenant = await createTenant(prisma);
});
afterAll(async () => {
  await prisma.$disconnect();
});

function cli(args: string[]) {
  return callctl(url, args);
}

/** An expired idempotency record and an old finished call with two events, and their live counterparts. */
async function history() {
  const now = Date.now();
  for (const expiresAt of [new Date(now - 60_000), new Date(now + DAY)]) {
    await bulkInsertIdempotencyRecords(prisma, [
      { accountId: tenant.accountId, key: randomUUID(), createdAt: expiresAt, expiresAt },
    ]);
  }
  for (const endedAt of [new Date(now - 400 * DAY), new Date(now - DAY)]) {
    await insertEndedCalls(prisma, { ...tenant, count: 1, endedAt });
  }
}

describe('callctl retention run', () => {
  it('--json: one object with the outcome and the rows deleted per table', async () => {
    await history();
    const { code, stdout, stderr } = await cli(['retention', 'run', '--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      outcome: 'completed',
      deleted: {
        idempotency_records: 1,
        sessions: 0,
        one_time_tokens: 0,
        webhook_deliveries: 0,
        webhook_attempts: 0,
        calls: 1,
        call_events: 2,
        audit_log: 0,
      },
      total: 4,
    });
    const sql = sqlPool(prisma);
    expect((await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM calls')).rows[0]?.n).toBe(1);
    expect((await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_records')).rows[0]?.n).toBe(1);
  });

  it('for people: a line per table', async () => {
    await history();
    const { code, stdout } = await cli(['retention', 'run']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^outcome: completed$/m);
    expect(stdout).toMatch(/^ {2}idempotency records: +1$/m);
    expect(stdout).toMatch(/^ {2}calls: +1$/m);
    expect(stdout).toMatch(/^ {2}call events: +2$/m);
    expect(stdout).toMatch(/^total: +4$/m);
  });

  it('deletes nothing while another process holds the lock, and says so', async () => {
    await history();
    const other = createRetentionPool(url);
    try {
      const held = await tryRetentionLock(other);
      const human = await cli(['retention', 'run']);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^outcome: skipped$/m);
      expect(human.stdout).toContain('Another process is deleting right now');
      const json = await cli(['retention', 'run', '--json']);
      expect(JSON.parse(json.stdout)).toMatchObject({ outcome: 'skipped', total: 0 });
      await held!.release();
    } finally {
      await other.end();
    }
    expect(JSON.parse((await cli(['retention', 'run', '--json'])).stdout)).toMatchObject({
      outcome: 'completed',
      total: 4,
    });
  });

  it('is in the help, and takes no arguments', async () => {
    const help = await cli(['retention', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('callctl retention run');
    const wrong = await cli(['retention', 'run', 'now', '--json']);
    expect(wrong.code).toBe(2);
    expect(json<CliError>(wrong.stderr).error).toMatch(/Unexpected argument "now"/);
  });
});
