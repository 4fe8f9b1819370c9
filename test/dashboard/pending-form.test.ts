// A form sent when the password had to be typed again (src/domain/pending-form.ts): its fields wait in the session
// without the CSRF token or any password, come back filled in once on the form's page after the re-check, and lapse.
// test/browser/recent-sign-in.test.ts shows the same in chromium.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { keptFields, PENDING_FORM_MS } from '../../src/domain/pending-form.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, PASSWORD, Visitor } from './helpers.js';

let now = new Date('2054-11-23T09:00:00Z');
let app: App;
let agencyId: string;
const CONFIRM = `/dashboard/confirm-password?next=${encodeURIComponent('/dashboard/users')}`;
const EMAIL_FIELD = /id="f-invite-email" type="email" name="email" value="([^"]*)"/;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => now }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Patience' }));
  await createUserWithPassword(app.storage, agencyId, 'slow@patience.example');
});

async function staleOwner(): Promise<Visitor> {
  const owner = new Visitor(app);
  expect((await owner.signIn('slow@patience.example')).status).toBe(303);
  now = new Date(now.getTime() + 11 * 60_000);
  return owner;
}

describe('a form sent when the password had to be typed again', () => {
  it('keeps no CSRF token, password, secret or token field', () => {
    expect(
      keptFields({ _csrf: 'c', password: 'p', current: 'q', new_password: 'r', secret: 's', token: 't', url: 'u' }),
    ).toEqual({ url: 'u' });
    expect(keptFields({ url: 'x'.repeat(5000), n: 1 })).toEqual({});
  });

  it('comes back filled in once on its page after the re-check, the session holding no token or password', async () => {
    const owner = await staleOwner();
    const sent = await owner.submit('/dashboard/users', '/dashboard/users/invite', {
      email: 'waited@patience.example',
      account: agencyId,
    });
    expect(sent.location).toBe(CONFIRM);
    const rows = await prismaOf(app).session.findMany({ select: { data: true } });
    const kept = rows.map((r) => (r.data as { pendingForm?: unknown }).pendingForm).find(Boolean);
    expect(kept).toMatchObject({
      path: '/dashboard/users',
      action: '/dashboard/users/invite',
      fields: { email: 'waited@patience.example', account: agencyId, from: 'users' },
    });
    expect(JSON.stringify(kept)).not.toContain(owner.lastCsrf!);

    const confirm = await owner.get(CONFIRM);
    expect(confirm.body).toContain('What you typed in the form is kept');
    expect((await owner.submit(CONFIRM, '/dashboard/confirm-password', { password: PASSWORD })).location).toBe(
      '/dashboard/users',
    );
    expect(EMAIL_FIELD.exec((await owner.get('/dashboard/users')).body)?.[1]).toBe('waited@patience.example');
    expect(EMAIL_FIELD.exec((await owner.get('/dashboard/users')).body)?.[1]).toBe('');
  });

  it('lapses after a while: the page shows the empty form', async () => {
    const owner = await staleOwner();
    await owner.submit('/dashboard/users', '/dashboard/users/invite', {
      email: 'gone@patience.example',
      account: agencyId,
    });
    now = new Date(now.getTime() + PENDING_FORM_MS + 60_000);
    expect((await owner.submit(CONFIRM, '/dashboard/confirm-password', { password: PASSWORD })).status).toBe(303);
    expect(EMAIL_FIELD.exec((await owner.get('/dashboard/users')).body)?.[1]).toBe('');
  });
});
