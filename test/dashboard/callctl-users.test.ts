// callctl user create / link / disable / enable / setup through runCli on a real database: output contract, usage
// errors, a new link voiding the earlier ones, enabling again, and e-mail through a real SMTP server when configured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../src/admin/sign-in.js';
import { setPasswordWithLink, usableLink } from '../../src/admin/users.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { json } from '../helpers/json.js';
import { startSmtp } from '../helpers/smtp.js';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { freshDatabase, storageOf } from '../helpers/database.js';

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

const tokenOf = (url: string) => url.split('/').at(-1)!;

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
    expect(await prisma.user.findUniqueOrThrow({ where: { id: out.user_id as string } })).toMatchObject({
      email: 'owner@acme.example',
      passwordHash: null,
    });
    // Run twice, setup is refused: nothing made, and the error names the account and the flag that allows it.
    const agencies = await prisma.account.count({ where: { kind: 'agency' } });
    const twice = await cli(['setup', '--agency-name', 'Acme Agency', '--email', 'owner@acme.example', '--json']);
    expect(twice.code).toBe(1);
    expect(json<CliError>(twice.stderr).error).toBe(
      `owner@acme.example already has a dashboard user in Acme Agency (account ${out.agency_id as string}). To add ` +
        'another user with this email anyway, add --allow-existing-email: signing in then asks which account to open.',
    );
    expect(await prisma.account.count({ where: { kind: 'agency' } })).toBe(agencies);
    expect(await prisma.user.count({ where: { email: 'owner@acme.example' } })).toBe(1);
    // Told so, the same person may own a second agency, with a user of its own.
    const again = await cli([
      'setup',
      '--agency-name',
      'Other',
      '--email',
      'OWNER@acme.example',
      '--allow-existing-email',
      '--json',
    ]);
    expect(again.code).toBe(0);
    // user create follows the same rule.
    const elsewhere = await cli([
      'user',
      'create',
      '--account',
      again.json().agency_id as string,
      '--email',
      'x@acme.example',
      '--json',
    ]);
    expect(elsewhere.code).toBe(0);
    const refused = await cli([
      'user',
      'create',
      '--account',
      out.agency_id as string,
      '--email',
      'X@acme.example',
      '--json',
    ]);
    expect(refused.code).toBe(1);
    expect(json<CliError>(refused.stderr).error).toContain('add --allow-existing-email');
    const allowed = await cli([
      'user',
      'create',
      '--account',
      out.agency_id as string,
      '--email',
      'X@acme.example',
      '--allow-existing-email',
      '--json',
    ]);
    expect(allowed.code).toBe(0);
    expect(again.json().user_id).not.toBe(out.user_id);
    // In one agency the address stays unique.
    const taken = await cli([
      'user',
      'create',
      '--account',
      out.agency_id as string,
      '--email',
      'owner@ACME.example',
      '--json',
      '--allow-existing-email',
    ]);
    expect(taken.code).toBe(1);
    expect(json<CliError>(taken.stderr).error).toBe('A user with the email owner@acme.example already exists');
    // Two users with this address: `user link` wants the id, and names both.
    const ambiguous = await cli(['user', 'link', 'owner@acme.example', '--json']);
    expect(ambiguous.code).toBe(1);
    expect(json<CliError>(ambiguous.stderr).error).toContain('2 users have the email owner@acme.example');
    expect(json<CliError>(ambiguous.stderr).error).toContain(out.user_id as string);
    expect(json<CliError>(ambiguous.stderr).error).toContain(again.json().user_id as string);
  });

  it('user create prints {id, role, set_password_url} using PUBLIC_BASE_URL; for people, with a notice that it is shown once', async () => {
    const { agency_id: agencyId } = (
      await cli(['setup', '--agency-name', 'B', '--email', 'b@b.example', '--json'])
    ).json();
    const res = await cli(['user', 'create', '--account', agencyId as string, '--email', 'two@b.example', '--json'], {
      PUBLIC_BASE_URL: 'https://calls.example.com',
    });
    expect(Object.keys(res.json()).sort()).toEqual(['id', 'role', 'set_password_url']);
    expect(res.json().set_password_url).toMatch(
      /^https:\/\/calls\.example\.com\/dashboard\/set-password\/[A-Za-z0-9_-]{43}$/,
    );
    const human = await cli(['user', 'create', '--account', agencyId as string, '--email', 'three@b.example']);
    expect(human.stdout).toMatch(/set password url: https:\/\/localhost:8443\/dashboard\/set-password\//);
    expect(human.stdout).toContain('shown only once');
    expect(
      await prisma.auditEntry.count({
        where: { accountId: agencyId as string, action: 'user_created', actorKind: 'operator' },
      }),
    ).toBe(3);
  });

  it('user create refuses a bad email before the database (exit 2), an unknown account (exit 1), a taken email (exit 1)', async () => {
    expect((await cli(['user', 'create', '--account', 'x', '--email', 'not-an-email', '--json'])).code).toBe(2);
    const unknown = await cli([
      'user',
      'create',
      '--account',
      '00000000-0000-4000-8000-000000000000',
      '--email',
      'a@c.example',
      '--json',
    ]);
    expect(unknown.code).toBe(1);
    expect(json<CliError>(unknown.stderr).error).toBe('No account 00000000-0000-4000-8000-000000000000');
  });

  it('user disable disables the user and ends their sessions; a second time says it already was', async () => {
    const made = (await cli(['setup', '--agency-name', 'C', '--email', 'c@c.example', '--json'])).json();
    const userId = made.user_id as string;
    // Another owner first: the account's last active owner stays one (test/cli/user-roles.test.ts).
    await cli(['user', 'create', '--account', made.agency_id as string, '--email', 'c2@c.example', '--json']);
    const res = await cli(['user', 'disable', userId, '--json']);
    expect(res.code).toBe(0);
    expect(res.json()).toEqual({ id: userId, disabled: true, already_disabled: false, sessions_ended: 0 });
    expect((await cli(['user', 'disable', userId, '--json'])).json().already_disabled).toBe(true);
    expect((await cli(['user', 'disable', 'nope', '--json'])).code).toBe(1);
  });

  it('user link makes a new link (by id or email) that voids the earlier ones and sets the password; audited', async () => {
    const made = (await cli(['setup', '--agency-name', 'D', '--email', 'd@d.example', '--json'])).json();
    const first = tokenOf(made.set_password_url as string);
    const byEmail = await cli(['user', 'link', 'D@d.example', '--json']);
    expect(byEmail.code).toBe(0);
    expect(Object.keys(byEmail.json())).toEqual(['set_password_url']);
    const second = tokenOf(byEmail.json().set_password_url as string);
    const now = new Date();
    expect(await usableLink(storageOf(prisma), first, now)).toBeNull();
    expect(await usableLink(storageOf(prisma), second, now)).not.toBeNull();
    const byId = await cli(['user', 'link', made.user_id as string]);
    expect(byId.stdout).toContain('shown only once');
    const third = tokenOf(/https:\S+/.exec(byId.stdout)![0]);
    expect(await usableLink(storageOf(prisma), second, new Date())).toBeNull();

    const password = 'lantern over the quiet harbour';
    expect(
      await setPasswordWithLink(storageOf(prisma), { token: third, password, ip: null, now: new Date() }),
    ).toMatchObject({
      ok: true,
    });
    expect(
      await authenticate(storageOf(prisma), { email: 'd@d.example', password, ip: null, now: new Date() }),
    ).toMatchObject({
      ok: true,
      userId: made.user_id,
    });
    const entries = await prisma.auditEntry.findMany({
      where: { action: 'sign_in_link_created', accountId: made.agency_id as string },
      orderBy: { createdAt: 'asc' },
    });
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ actorKind: 'operator', actorUserId: null });
    expect(entries[0]!.detail).toMatchObject({ user_id: made.user_id, earlier_links_ended: 1 });

    expect((await cli(['user', 'link', 'nobody@d.example', '--json'])).code).toBe(1);
    expect((await cli(['user', 'link', '00000000-0000-4000-8000-000000000000', '--json'])).code).toBe(1);
  });

  it('user enable lets a disabled user sign in again; a disabled user gets no link until then', async () => {
    const made = (await cli(['setup', '--agency-name', 'E', '--email', 'e@e.example', '--json'])).json();
    await cli(['user', 'create', '--account', made.agency_id as string, '--email', 'e2@e.example', '--json']);
    const password = 'seven swans beside the mill';
    await setPasswordWithLink(storageOf(prisma), {
      token: tokenOf(made.set_password_url as string),
      password,
      ip: null,
      now: new Date(),
    });
    await cli(['user', 'disable', made.user_id as string, '--json']);
    expect(
      await authenticate(storageOf(prisma), { email: 'e@e.example', password, ip: null, now: new Date() }),
    ).toEqual({
      ok: false,
    });
    const refused = await cli(['user', 'link', made.user_id as string, '--json']);
    expect(refused.code).toBe(1);
    expect(json<CliError>(refused.stderr).error).toBe(
      'e@e.example is disabled: enable them first, then make a new sign-in link.',
    );

    const enabled = await cli(['user', 'enable', made.user_id as string, '--json']);
    expect(enabled.code).toBe(0);
    expect(enabled.json()).toEqual({ id: made.user_id, enabled: true, already_enabled: false });
    expect(
      await authenticate(storageOf(prisma), { email: 'e@e.example', password, ip: null, now: new Date() }),
    ).toMatchObject({
      ok: true,
    });
    expect((await cli(['user', 'enable', made.user_id as string, '--json'])).json().already_enabled).toBe(true);
    expect(
      await prisma.auditEntry.count({
        where: { action: 'user_enabled', actorKind: 'operator', accountId: made.agency_id as string },
      }),
    ).toBe(1);
    expect((await cli(['user', 'enable', 'nope', '--json'])).code).toBe(1);
  });

  it('with SMTP_URL, user link and user create also e-mail the link (a real SMTP server); a failed send is reported, not fatal', async () => {
    const smtp = await startSmtp({ user: 'mailer', pass: 's3cret' });
    try {
      const env = { SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://calls.example.com' };
      const made = (await cli(['setup', '--agency-name', 'Mail Agency', '--email', 'm@m.example', '--json'])).json();
      const linked = await cli(['user', 'link', 'm@m.example', '--json'], env);
      expect(linked.json()).toMatchObject({ emailed: true });
      const created = await cli(
        ['user', 'create', '--account', made.agency_id as string, '--email', 'N@m.example', '--json'],
        env,
      );
      expect(created.json()).toMatchObject({ emailed: true });
      const [first, second] = await smtp.waitFor(2);
      expect(first!.to).toEqual(['m@m.example']);
      expect(first!.from).toBe('no-reply@calls.example.com');
      expect(first!.subject).toBe('Your new dashboard sign-in link');
      expect(first!.text).toContain('An admin of the account named "Mail Agency" made you a new sign-in link.');
      expect(first!.text).toContain(linked.json().set_password_url as string);
      expect(second!.to).toEqual(['n@m.example']);
      expect(second!.text).toContain(created.json().set_password_url as string);
      // Each e-mail is audited on the user's account, as the operator's.
      const sent = await prisma.auditEntry.findMany({
        where: { action: 'email_sent', accountId: made.agency_id as string },
        orderBy: { createdAt: 'asc' },
      });
      expect(sent.map((e) => [e.actorKind, e.detail])).toEqual([
        ['operator', { kind: 'sign_in_link', to: 'm@m.example', sent: true }],
        ['operator', { kind: 'invitation', to: 'n@m.example', sent: true }],
      ]);
    } finally {
      await smtp.stop();
    }
    // Nobody listens there any more: the link is still made and printed; the send failure is said, exit 0.
    const failed = await cli(['user', 'link', 'm@m.example', '--json'], {
      SMTP_URL: smtp.url,
      PUBLIC_BASE_URL: 'https://calls.example.com',
    });
    expect(failed.code).toBe(0);
    expect(failed.json()).toMatchObject({ emailed: false });
    expect(failed.json().set_password_url).toMatch(/^https:\/\/calls\.example\.com\/dashboard\/set-password\//);
    expect(failed.json().email_error).toEqual(expect.any(String));
  });

  it('lists the user and setup commands in help', async () => {
    const help = await cli(['--help']);
    expect(help.stdout).toContain('callctl user link <user-id|email>');
    expect(help.stdout).toContain('callctl user enable <user-id>');
    expect(help.stdout).toContain(
      'callctl user create --account <account-id> --email <email> [--role owner|admin|member|viewer] ' +
        '[--allow-existing-email]',
    );
    expect(help.stdout).toContain('callctl user role <user-id> owner|admin|member|viewer');
    expect(help.stdout).toContain('callctl setup --agency-name <name> --email <email> [--allow-existing-email]');
    expect(help.stdout).toMatch(/--allow-existing-email {2,}Allow an email that already has a dashboard user/);
  });
});
