// Caps per callee across replicas (issue 48.3): two dispatcher replicas in separate processes, each with its own
// pool, claim at once the calls of sixteen clients of one agency, all to one number under a cap of eight per 24 hours
// counted across the agency: never more than eight dials in the ledger, eight calls dialling, the others held by
// the cap. Without the lock, the replicas' counts read the same dials and both place calls. The claims of the two meet only at the lock per (agency, number): each holds other accounts.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { forkChild, stopChild } from '../helpers/child-processes.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import { RULES_ON, storeCallingRules } from '../helpers/seed/calling-rules.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const REPLICA = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cap-race-replica.ts');
const NUMBER = '+13055550123';
/** Thursday 2056-01-13 15:00 in Miami: within every rule's hours (the hours are not this test's subject). */
const T = new Date('2056-01-13T20:00:00Z');
const CAP = 8;
const CLIENTS = 16;
const CALLS_PER_CLIENT = 2;

interface Report {
  ready?: boolean;
  claimed?: number;
  error?: string;
}

describe('caps per callee across replicas', () => {
  it('two replicas racing for one number at the cap never place more than the cap', async () => {
    const { app, databaseUrl } = await buildTestApp({ clock: () => T });
    const agency = await createTenant(app.storage);
    await storeCallingRules(prismaOf(app), agency.accountId, {
      ...RULES_ON,
      rule_sets: [],
      cap: { per_24h: CAP, per_7d: null, scope: 'agency' },
    });
    const clients = [];
    for (let i = 0; i < CLIENTS; i++) clients.push(await createClientTenant(app.storage, agency.accountId));
    // No dispatcher in this app: the calls wait for the replicas.
    for (let n = 0; n < CALLS_PER_CLIENT; n++)
      for (const client of clients) callIdOf(await trigger(app, client.key, { phone_number: NUMBER }));
    const ids = clients.map((c) => c.accountId);

    // Each replica goes through the accounts in its own order: they hold different accounts at the same time.
    const orders = [ids, [...ids].reverse()];
    const replicas = orders.map((order) =>
      forkChild(REPLICA, [], {
        execArgv: ['--import', 'tsx'],
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          NOW: T.toISOString(),
          ACCOUNTS: order.join(','),
          WARM_UP_ACCOUNT: agency.accountId,
          COUNTED_PAUSE_MS: '50',
        },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      }),
    );
    try {
      const reports = replicas.map(() => [] as Report[]);
      replicas.forEach((child, i) => child.on('message', (m: Report) => reports[i]!.push(m)));
      await waitFor(
        () => reports,
        (r) => r.every((list) => list.some((m) => m.ready)),
        30_000,
      );
      for (const child of replicas) child.send('go');
      const done = await waitFor(
        () => reports,
        (r) => r.every((list) => list.some((m) => m.claimed !== undefined || m.error !== undefined)),
        60_000,
      );
      const finals = done.map((list) => list.find((m) => m.claimed !== undefined || m.error !== undefined)!);
      expect(finals.map((m) => m.error)).toEqual([undefined, undefined]);

      const prisma = prismaOf(app);
      expect(await prisma.calleeDial.count({ where: { phoneNumber: NUMBER } })).toBe(CAP);
      const calls = await prisma.call.groupBy({ by: ['status', 'heldBy'], _count: true, orderBy: { status: 'asc' } });
      expect(calls.map((c) => [c.status, c.heldBy, c._count])).toEqual([
        ['initiated', 'cap', CLIENTS * CALLS_PER_CLIENT - CAP],
        ['dialing', null, CAP],
      ]);
      expect(finals.reduce((sum, m) => sum + m.claimed!, 0)).toBe(CAP);
    } finally {
      await Promise.all(replicas.map((child) => stopChild(child, 'SIGKILL')));
    }
  });
});
