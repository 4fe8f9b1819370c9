// callctl user create / user disable / setup through runCli on a real database: output contract, usage errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callctl } from '../helpers/cli.js';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { freshDatabase } from '../helpers/database.js';

let url: string;
let prisma: PrismaClient;

beforeAll(async () => {
  ({ url } = await freshDatabase());
  prisma = createPrisma(url, { max: 2 });
});
afterAll(async () => {
  await prisma.$disconnect();
});

function cli(args: string[], env: Record<string, string> = {}) {
  return callctl(url, args, env);
}

const LINK = /^https:\/\/localhost:8443\/dashboard\/set-password\/[A-Za-z0-9_-]{43}$/;

describe('callctl user and setup', () => {
  it('setup creates an agency on the agency plan and its first user, and prints the one-time link', async () => {
    const res = await cli(['setup', '--agency-name', 'Acme Agency', '--email', 'Owner@Acme.example', '--json']);
    expect(res.code).toBe(0);
    const out = res.json();
    expect(Object.keys(out).sort()).toEqual(['agency_id', 'set_password_url', 'user_id']);
    expect(out.set_password_url).toMatch(LINK);
    const agency = await prisma.account.findUniqueOrThrow({ where: { id: out.agency_id as string } });
    expect(agency).toMatchObject({ kind: 'agency', plan: 'agency', name: 'Acme Agency' });
    expect(await prisma.user.findUniqueOrThrow({ where: { id: out.user_id as string } })).toMatchObject({ email: 'owner@acme.example', passwordHash: null });
    // A second setup with the same email (any case) is refused and leaves no agency behind.
    const count = await prisma.account.count();
    const again = await cli(['setup', '--agency-name', 'Other', '--email', 'OWNER@acme.example', '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).error).toBe('A user with the email owner@acme.example already exists');
    expect(await prisma.account.count()).toBe(count);
  });

  it('user create prints {id, set_password_url} using PUBLIC_BASE_URL; for people, with a notice that it is shown once', async () => {
    const { agency_id: agencyId } = (await cli(['setup', '--agency-name', 'B', '--email', 'b@b.example', '--json'])).json();
    const res = await cli(['user', 'create', '--account', agencyId as string, '--email', 'two@b.example', '--json'], { PUBLIC_BASE_URL: 'https://calls.example.com' });
    expect(Object.keys(res.json()).sort()).toEqual(['id', 'set_password_url']);
    expect(res.json().set_password_url).toMatch(/^https:\/\/calls\.example\.com\/dashboard\/set-password\/[A-Za-z0-9_-]{43}$/);
    const human = await cli(['user', 'create', '--account', agencyId as string, '--email', 'three@b.example']);
    expect(human.stdout).toMatch(/set password url: https:\/\/localhost:8443\/dashboard\/set-password\//);
    expect(human.stdout).toContain('shown only once');
    expect(await prisma.auditEntry.count({ where: { accountId: agencyId as string, action: 'user_created', actorKind: 'operator' } })).toBe(3);
  });

  it('user create refuses a bad email before the database (exit 2), an unknown account (exit 1), a taken email (exit 1)', async () => {
    expect((await cli(['user', 'create', '--account', 'x', '--email', 'not-an-email', '--json'])).code).toBe(2);
    const unknown = await cli(['user', 'create', '--account', '00000000-0000-4000-8000-000000000000', '--email', 'a@c.example', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error).toBe('No account 00000000-0000-4000-8000-000000000000');
  });

  it('user disable disables the user and ends their sessions; a second time says it already was', async () => {
    const { user_id: userId } = (await cli(['setup', '--agency-name', 'C', '--email', 'c@c.example', '--json'])).json();
    const res = await cli(['user', 'disable', userId as string, '--json']);
    expect(res.code).toBe(0);
    expect(res.json()).toEqual({ id: userId, disabled: true, already_disabled: false, sessions_ended: 0 });
    expect((await cli(['user', 'disable', userId as string, '--json'])).json().already_disabled).toBe(true);
    expect((await cli(['user', 'disable', 'nope', '--json'])).code).toBe(1);
  });

  it('lists the user and setup commands in help', async () => {
    const help = await cli(['--help']);
    expect(help.stdout).toContain('callctl user create --account <account-id> --email <email>');
    expect(help.stdout).toContain('callctl setup --agency-name <name> --email <email>');
  });
});
