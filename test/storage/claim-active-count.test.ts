// The dispatcher's claim counts an account's active calls (its free slots) from calls_active_by_account, the partial
// index of dialling and connected calls, as the generic plan a prepared statement settles on too: with the statuses
// a parameter (status = ANY($4)), that plan read every call the account ever made through another index and
// filtered them, on every claim pass for it. The Overview's live counts (oct_live_call_counts) name them the same way.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimCandidates, lockDueAccounts } from '../../src/storage/call-claims.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { bulkInsertCalls } from '../helpers/seed.js';
import {
  databaseReportingPlans,
  PlanCapture,
  renderPlan,
  rowsReadFrom,
  sessionPlanning,
  type PlannedStorage,
} from '../helpers/plan-capture.js';

/** The account's finished calls: a count of its active calls that read them would read every one. */
const HISTORY = 20_000;
const MAX_ACTIVE = 5;

const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let tenant: Tenant;
const now = new Date();

async function insertCalls(status: 'initiated' | 'dialing' | 'completed', count: number, notBefore: Date) {
  await bulkInsertCalls(
    client,
    Array.from({ length: count }, (_, i) => {
      const at = new Date(notBefore.getTime() - (i + 1) * 1000);
      return {
        accountId: tenant.accountId,
        agentId: tenant.agentId,
        phoneNumber: `+1415${String(i + 1).padStart(7, '0')}`,
        status,
        notBefore: at,
        expiresAt: new Date(notBefore.getTime() + 86_400_000),
        createdAt: at,
        updatedAt: notBefore,
        endedAt: status === 'completed' ? notBefore : null,
      };
    }),
  );
}

beforeAll(async () => {
  ({ client, storages } = await databaseReportingPlans(capture));
  tenant = await createTenant(storages[0]!.storage);
  await insertCalls('completed', HISTORY, now);
  await insertCalls('dialing', 2, now);
  await insertCalls('initiated', 6, now);
  await client.query('ANALYZE calls');
}, 120_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

describe("the claim's count of an account's active calls", () => {
  it('reads the active calls only, with its values and as the generic plan', async () => {
    for (const mode of ['auto', 'force_generic_plan'] as const) {
      // A session of the service's kind (its plans reported), planning as the mode says.
      const claimer = await sessionPlanning(client, mode);
      capture.start();
      try {
        // Six times: a prepared statement is planned for its values five times, then may keep a generic plan.
        for (let i = 0; i < 6; i++) {
          const {
            result: { locked, candidates },
            plans: ran,
          } = await capture.plansDuring('claim', async () => {
            await claimer.query('BEGIN');
            try {
              const locked = await lockDueAccounts(claimer, { now, maxActive: MAX_ACTIVE, limit: 50 });
              const candidates = await claimCandidates(claimer, { accountIds: locked, maxActive: MAX_ACTIVE, now });
              return { locked, candidates };
            } finally {
              await claimer.query('ROLLBACK');
            }
          });
          expect(locked).toEqual([tenant.accountId]);
          // Five slots, two taken: the three oldest due calls.
          expect(candidates).toHaveLength(MAX_ACTIVE - 2);
          expect(ran.length).toBeGreaterThan(0);
          const calls = rowsReadFrom(ran, 'calls');
          // The two active calls (twice: due accounts, then candidates) and the due calls up to the free slots.
          expect(calls, `${mode}, run ${i + 1}\n${ran.flatMap(renderPlan).join('\n')}`).toBeLessThanOrEqual(20);
        }
      } finally {
        capture.stop();
        await claimer.end();
      }
    }
  });
});
