// `callctl user create --role` and `callctl user role`: an operator gives dashboard users their role (owner unless
// said), audited as the operator's; an unknown role is a usage error (exit 2), an unknown user or the account's last
// active owner a refusal (exit 1) that changes nothing. Two demotions at once never leave an account without an owner.
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import { createUser, disableUser } from '../../src/admin/users.js';
import { setUserRole } from '../../src/admin/user-roles.js';
import { AdminError } from '../../src/admin/errors.js';
import type { App } from '../../src/app.js';
import { LAST_OWNER } from '../../src/domain/roles.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { json } from '../helpers/json.js';

let app: App;
let databaseUrl: string;
let agency: Tenant;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
  agency = await createTenant(app.storage);
});

const cli = (args: string[]) => callctl(databaseUrl, args, {}, app.now);
const roleOf = async (id: string) => (await prismaOf(app).user.findUniqueOrThrow({ where: { id } })).role;

describe('callctl user roles', () => {
  it('user create makes an owner unless --role says otherwise, and refuses an unknown role before the database', async () => {
    const owner = await cli(['user', 'create', '--account', agency.accountId, '--email', 'o@roles.example', '--json']);
    expect(owner.code).toBe(0);
    expect(owner.json().role).toBe('owner');
    expect(await roleOf(owner.json().id as string)).toBe('owner');
    const viewer = await cli([
      ...['user', 'create', '--account', agency.accountId, '--email', 'v@roles.example'],
      ...['--role', 'viewer', '--json'],
    ]);
    expect(viewer.json().role).toBe('viewer');
    expect(await roleOf(viewer.json().id as string)).toBe('viewer');
    const audited = await prismaOf(app).auditEntry.findFirstOrThrow({
      where: { action: 'user_created', detail: { path: ['user_id'], equals: viewer.json().id as string } },
    });
    expect(audited.detail).toMatchObject({ role: 'viewer' });

    const bad = await cli([
      ...['user', 'create', '--account', agency.accountId, '--email', 'x@roles.example'],
      ...['--role', 'boss', '--json'],
    ]);
    expect(bad.code).toBe(2);
    expect(json<CliError>(bad.stderr).error).toBe('Unknown role "boss": expected one of owner, admin, member, viewer');
    expect(await prismaOf(app).user.count({ where: { email: 'x@roles.example' } })).toBe(0);
  });

  it('user role gives a role, says when it already was, and is audited as the operator', async () => {
    const { id } = await createUser(app.storage, {
      accountId: agency.accountId,
      email: 'm@roles.example',
      role: 'member',
      actor: { kind: 'operator' },
      now: app.now(),
    });
    const res = await cli(['user', 'role', id, 'admin', '--json']);
    expect(res.code).toBe(0);
    expect(res.json()).toEqual({ id, email: 'm@roles.example', role: 'admin', previous_role: 'member', changed: true });
    expect(await roleOf(id)).toBe('admin');
    expect((await cli(['user', 'role', id, 'admin', '--json'])).json().changed).toBe(false);
    const entries = await prismaOf(app).auditEntry.findMany({
      where: { action: 'user_role_changed', accountId: agency.accountId },
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actorKind: 'operator', actorUserId: null });
    expect(entries[0]!.detail).toEqual({ user_id: id, email: 'm@roles.example', from: 'member', to: 'admin' });

    expect((await cli(['user', 'role', id, 'chief', '--json'])).code).toBe(2);
    const unknown = await cli(['user', 'role', '00000000-0000-4000-8000-000000000000', 'viewer', '--json']);
    expect(unknown.code).toBe(1);
    expect(json<CliError>(unknown.stderr).error).toBe('No user 00000000-0000-4000-8000-000000000000');
  });

  it("refuses to demote or disable an account's last active owner, and lets them go once another owner exists", async () => {
    const alone = await createTenant(app.storage);
    const { id } = await createUser(app.storage, {
      accountId: alone.accountId,
      email: 'only@roles.example',
      actor: { kind: 'operator' },
      now: app.now(),
    });
    for (const args of [
      ['user', 'role', id, 'admin', '--json'],
      ['user', 'disable', id, '--json'],
    ]) {
      const refused = await cli(args);
      expect(refused.code).toBe(1);
      expect(json<CliError>(refused.stderr).error).toBe(LAST_OWNER);
    }
    expect(await prismaOf(app).user.findUniqueOrThrow({ where: { id } })).toMatchObject({
      role: 'owner',
      disabledAt: null,
    });
    // A disabled owner is no owner the account keeps: a second one, disabled, does not count.
    const other = await createUser(app.storage, {
      accountId: alone.accountId,
      email: 'other@roles.example',
      actor: { kind: 'operator' },
      now: app.now(),
    });
    await disableUser(app.storage, other.id, OPERATOR, app.now());
    expect((await cli(['user', 'role', id, 'viewer', '--json'])).code).toBe(1);
    expect((await cli(['user', 'enable', other.id, '--json'])).code).toBe(0);
    expect((await cli(['user', 'role', id, 'viewer', '--json'])).code).toBe(0);
    expect(await roleOf(id)).toBe('viewer');
  });

  it('of two owners demoted at once, one stays owner: the second change waits for the first and is refused', async () => {
    for (let round = 0; round < 5; round++) {
      const tenant = await createTenant(app.storage);
      const owners = await Promise.all(
        ['a', 'b'].map(
          async (name) =>
            (
              await createUser(app.storage, {
                accountId: tenant.accountId,
                email: `${name}-${round}@race.example`,
                actor: { kind: 'operator' },
                now: app.now(),
              })
            ).id,
        ),
      );
      const results = await Promise.allSettled([
        setUserRole(app.storage, owners[0]!, 'member', { kind: 'operator' }, app.now()),
        setUserRole(app.storage, owners[1]!, 'viewer', { kind: 'operator' }, app.now()),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected');
      expect(refused?.reason).toBeInstanceOf(AdminError);
      expect((refused?.reason as Error).message).toBe(LAST_OWNER);
      expect(
        await prismaOf(app).user.count({ where: { accountId: tenant.accountId, role: 'owner', disabledAt: null } }),
      ).toBe(1);
    }
  });
});
