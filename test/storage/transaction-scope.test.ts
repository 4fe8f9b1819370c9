// Storage.transaction hands out the Prisma repositories only, each over the transaction's client: a statement of one
// of them inside `fn` is undone with the transaction, and a pool repository (whose statements would run on another
// connection, outside it) is not in the transaction's type, so reaching for one does not compile.
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { Repositories, Storage } from '../../src/storage/index.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { freshPrisma, storageOf } from '../helpers/database.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';

let prisma: PrismaClient;
let storage: Storage;
let tenant: Tenant;

beforeAll(async () => {
  ({ prisma } = await freshPrisma());
  storage = storageOf(prisma);
  tenant = await createTenant(prisma);
});

afterAll(async () => {
  await prisma?.$disconnect();
});

describe('Storage.transaction', () => {
  it('offers no pool repository and none of the pool side of a repository (checked by the typecheck)', () => {
    expectTypeOf<Repositories>().not.toHaveProperty('calls');
    expectTypeOf<Repositories>().not.toHaveProperty('claims');
    expectTypeOf<Repositories>().not.toHaveProperty('history');
    expectTypeOf<Repositories>().not.toHaveProperty('overview');
    expectTypeOf<Repositories>().not.toHaveProperty('scoped');
    expectTypeOf<Repositories>().not.toHaveProperty('notifications');
    expectTypeOf<Repositories['keys']>().not.toHaveProperty('findPrincipalByKeyDigest');
    expectTypeOf<Repositories['deliveries']>().not.toHaveProperty('claimDueDeliveries');
    expectTypeOf<Repositories['doNotCall']>().not.toHaveProperty('imports');
    // The storage itself offers them all.
    expectTypeOf<Storage>().toHaveProperty('calls');
    expectTypeOf<Storage['keys']>().toHaveProperty('findPrincipalByKeyDigest');
    expectTypeOf<Storage['deliveries']>().toHaveProperty('claimDueDeliveries');
    expectTypeOf<Storage['doNotCall']>().toHaveProperty('imports');
  });

  it('a pool statement inside fn is a compile error', () => {
    // What storage.transaction takes, without running it: the check is the typecheck's.
    const work = (fn: Parameters<Storage['transaction']>[0]) => fn;
    // @ts-expect-error calls is a pool repository: its statements would run outside the transaction.
    expect(work(async (tx: Storage) => tx.calls.liveCallTotals())).toBeTypeOf('function');
    expect(work(async (tx) => tx.keys.findApiAccessState(tenant.accountId))).toBeTypeOf('function');
  });

  it("runs the repositories' statements on the transaction's connection: undone when fn throws", async () => {
    const before = await storage.keys.findApiAccessState(tenant.accountId);
    const failed = storage.transaction(async (tx) => {
      await tx.keys.setApiAccessSwitch(tenant.accountId, !before!.accountSwitch, new Date());
      expect((await tx.keys.findApiAccessState(tenant.accountId))?.accountSwitch).toBe(!before!.accountSwitch);
      throw new Error('roll back');
    });
    await expect(failed).rejects.toThrow('roll back');
    expect((await storage.keys.findApiAccessState(tenant.accountId))?.accountSwitch).toBe(before!.accountSwitch);
  });
});
