// One-time links: callctl's link sets a password once; a second use, an expired link and a disabled user's link are
// refused; the policy's messages; the link's token is stored only as a digest and ends the user's sessions.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import { createUser, disableUser, setPasswordUrl } from '../../src/admin/users.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { DASHBOARD_ENV, Visitor } from './helpers.js';

let app: App;
let agencyId: string;
let now = new Date('2054-11-23T09:00:00Z');
let n = 0;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => now }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Acme' }));
});

async function link() {
  const email = `new${n++}@example.com`;
  const user = await createUser(app.storage, { accountId: agencyId, email, actor: { kind: 'operator' }, now });
  return { ...user, email, path: `/dashboard/set-password/${user.token}` };
}

const choose = (visitor: Visitor, path: string, password: string, confirm = password) =>
  visitor.submit(path, path, { password, confirm });

describe('set-password links', () => {
  it('work once: the password is set, the user signs in with it, a second use is refused', async () => {
    const { path, email, token, id } = await link();
    const visitor = new Visitor(app);
    const page = await visitor.get(path);
    expect(page.status).toBe(200);
    expect(page.body).toContain(email);
    const set = await choose(visitor, path, 'a long enough passphrase');
    expect(set.status).toBe(303);
    expect(set.location).toBe('/dashboard/sign-in');
    expect((await visitor.get('/dashboard/sign-in')).body).toContain('Your password is set.');
    expect((await visitor.signIn(email, 'a long enough passphrase')).status).toBe(303);

    const again = new Visitor(app);
    expect((await again.get(path)).status).toBe(410);
    again.lastCsrf = (await again.get('/dashboard/sign-in')) && again.lastCsrf;
    const reuse = await again.request('POST', path, {
      _csrf: again.lastCsrf!,
      password: 'another passphrase!',
      confirm: 'another passphrase!',
    });
    expect(reuse.status).toBe(410);
    expect(reuse.body).toContain('expired or was already used');
    // Only the digest is stored, and the audit says a link set it.
    const stored = await prismaOf(app).oneTimeToken.findFirstOrThrow({ where: { userId: id } });
    expect(Buffer.from(stored.digest).equals(createHash('sha256').update(token).digest())).toBe(true);
    expect(JSON.stringify(await prismaOf(app).oneTimeToken.findMany())).not.toContain(token);
    expect(await prismaOf(app).auditEntry.count({ where: { action: 'password_set', actorUserId: id } })).toBe(1);
  });

  it('expire after 24 hours', async () => {
    const { path } = await link();
    const visitor = new Visitor(app);
    now = new Date(now.getTime() + 24 * 3_600_000 - 1_000);
    expect((await visitor.get(path)).status).toBe(200);
    now = new Date(now.getTime() + 2_000);
    expect((await visitor.get(path)).status).toBe(410);
    expect(
      (
        await visitor.request('POST', path, {
          _csrf: visitor.lastCsrf!,
          password: 'a long enough passphrase',
          confirm: 'a long enough passphrase',
        })
      ).status,
    ).toBe(410);
  });

  it('stop working when the user is disabled', async () => {
    const { path, id } = await link();
    await disableUser(app.storage, id, { kind: 'operator' }, now);
    expect((await new Visitor(app).get(path)).status).toBe(410);
  });

  it('refuse an unknown or malformed token the same way', async () => {
    const visitor = new Visitor(app);
    expect((await visitor.get(`/dashboard/set-password/${'A'.repeat(43)}`)).status).toBe(410);
    expect((await visitor.get('/dashboard/set-password/short')).status).toBe(410);
  });

  it('apply the password policy with words a person understands, and keep the link usable meanwhile', async () => {
    const { path } = await link();
    const visitor = new Visitor(app);
    expect((await choose(visitor, path, 'short')).body).toContain('Use at least 8 characters.');
    expect((await choose(visitor, path, 'x'.repeat(129))).body).toContain('Use at most 128 characters.');
    expect((await choose(visitor, path, 'Password1')).body).toContain('one of the most common');
    expect((await choose(visitor, path, 'a long enough passphrase', 'a different passphrase')).body).toContain(
      'not the same',
    );
    // Any characters, no composition rules: a long phrase of lower-case words or an emoji sentence is fine.
    expect((await choose(visitor, path, '🦊🦊🦊🦊 jumps over')).status).toBe(303);
  });

  it('build the URL from PUBLIC_BASE_URL when set, else https://localhost:<PORT>', () => {
    expect(setPasswordUrl({ PUBLIC_BASE_URL: 'https://calls.example.com/', PORT: 8443 }, 'tok')).toBe(
      'https://calls.example.com/dashboard/set-password/tok',
    );
    expect(setPasswordUrl({ PUBLIC_BASE_URL: undefined, PORT: 9443 }, 'tok')).toBe(
      'https://localhost:9443/dashboard/set-password/tok',
    );
  });
});
