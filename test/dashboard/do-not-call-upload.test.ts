// The import's upload: only the import route takes multipart, and reads none of it before the session and the form's
// CSRF token (its first part); every other dashboard route, sign-in included, answers 415 without reading it; a body
// that is not readable multipart is a 400 page, never a 500. What the import reads: header variants, a plain list of
// numbers, numbers as people write them; the good rows with the bad ones listed on request; one import at a time per
// list and a few an hour, a refused one audited and answered 429 with Retry-After.
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { IMPORTS_PER_HOUR } from '../../src/admin/do-not-call-import.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { createUserWithPassword, DASHBOARD_ENV, HOST, ORIGIN, Visitor } from './helpers.js';
import { clearDoNotCall, forceDoNotCallImport, upsertDoNotCallImport } from '../helpers/seed.js';

let app: App;
let tenant: Tenant;
let visitor: Visitor;
const OWN = '/dashboard/do-not-call';
const BOUNDARY = '----oct-upload';

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenant = await createTenant(app.storage);
  await createUserWithPassword(app.storage, tenant.accountId, 'up@dnc.example');
  visitor = new Visitor(app);
  expect((await visitor.signIn('up@dnc.example')).status).toBe(303);
});

/** A 2 MiB multipart body, produced as it is read: `pulled()` says how much of it the server read. */
function countedBody(csrf = 'anything') {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.csv"\r\nContent-Type: text/csv\r\n\r\n`,
  );
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let sent = 0;
  const stream = new Readable({
    highWaterMark: 1,
    read() {
      if (sent === 0) this.push(head);
      if (sent >= 2 * 1024 * 1024) {
        this.push(`\r\n--${BOUNDARY}--\r\n`);
        this.push(null);
        return;
      }
      sent += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, pulled: () => sent };
}

const multipartHeaders = (cookie = '') => ({
  host: HOST,
  origin: ORIGIN,
  'x-forwarded-proto': 'https',
  'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
  ...(cookie ? { cookie } : {}),
});

const entries = () =>
  prismaOf(app).doNotCallEntry.findMany({
    where: { accountId: tenant.accountId },
    orderBy: { phoneNumber: 'asc' },
    select: { phoneNumber: true, reason: true },
  });
const clear = () => clearDoNotCall(prismaOf(app), { where: { accountId: tenant.accountId } });
const upload = (content: string, fields: Record<string, string> = {}) =>
  visitor.get(OWN).then(() => visitor.upload(`${OWN}/import`, { field: 'file', name: 'list.csv', content }, fields));
const decode = (text: string) =>
  text
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

describe('multipart only where a file is taken, and only after the checks', () => {
  it('reads nothing of an anonymous upload, to the import or to sign-in', async () => {
    for (const url of [`${OWN}/import`, '/dashboard/sign-in', '/dashboard/forgot-password']) {
      const body = countedBody();
      const res = await app.inject({ method: 'POST', url, headers: multipartHeaders(), payload: body.stream });
      expect(res.statusCode, url).toBeLessThan(500);
      expect(res.statusCode, url).not.toBe(200);
      // What the server pulled before answering: the stream's first chunks at most, never the 2 MiB.
      expect(body.pulled(), url).toBeLessThan(512 * 1024);
    }
  });

  it('answers 415 to multipart on any other route, signed in, without reading it', async () => {
    await visitor.get(OWN);
    const body = countedBody(visitor.lastCsrf!);
    const res = await app.inject({
      method: 'POST',
      url: `${OWN}/add`,
      headers: multipartHeaders(visitor.cookieHeader()),
      payload: body.stream,
    });
    expect(res.statusCode).toBe(415);
    expect(res.body).toContain('This page takes no file');
    expect(body.pulled()).toBeLessThan(512 * 1024);
  });

  it('answers a malformed multipart body with a 400 page, signed in or not', async () => {
    await visitor.get(OWN);
    const broken =
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${visitor.lastCsrf!}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.csv"\r\n\r\n+14155550100\n`;
    const signedIn = await app.inject({
      method: 'POST',
      url: `${OWN}/import`,
      headers: multipartHeaders(visitor.cookieHeader()),
      payload: broken,
    });
    expect(signedIn.statusCode).toBe(400);
    expect(signedIn.body).toContain('The upload could not be read as a form');
    const garbage = await app.inject({
      method: 'POST',
      url: `${OWN}/import`,
      headers: { ...multipartHeaders(visitor.cookieHeader()), 'content-type': 'multipart/form-data' },
      payload: 'no boundary at all',
    });
    expect(garbage.statusCode).toBe(400);
    const anonymous = await app.inject({
      method: 'POST',
      url: '/dashboard/sign-in',
      headers: multipartHeaders(),
      payload: broken,
    });
    expect(anonymous.statusCode).toBe(415);
    expect(await entries()).toEqual([]);
  });

  it('refuses a file sent before the token, or with a wrong one, with every form’s 403', async () => {
    await visitor.get(OWN);
    const fileFirst = await app.inject({
      method: 'POST',
      url: `${OWN}/import`,
      headers: multipartHeaders(visitor.cookieHeader()),
      payload:
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.csv"\r\n\r\n+14155550100\n\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${visitor.lastCsrf!}\r\n--${BOUNDARY}--\r\n`,
    });
    expect(fileFirst.statusCode).toBe(403);
    expect((await upload('+14155550100\n', { _csrf: 'forged' })).status).toBe(403);
    expect(await entries()).toEqual([]);
  });
});

describe('what the import reads', () => {
  it('reads "Phone Number,Reason" headers in any case and spacing, and numbers as people write them', async () => {
    await clear();
    const res = await upload(' Phone Number , REASON \n(415) 555-0101,by phone\n+1 415 555 0102,\n1-415-555-0103,x\n');
    expect(res.status).toBe(303);
    expect(await entries()).toEqual([
      { phoneNumber: '+14155550101', reason: 'by phone' },
      { phoneNumber: '+14155550102', reason: null },
      { phoneNumber: '+14155550103', reason: 'x' },
    ]);
  });

  it('reads a plain list of numbers without a header', async () => {
    await clear();
    expect((await upload('+14155550111\n415 555 0112\n\n+14155550111\n')).status).toBe(303);
    expect((await entries()).map((e) => e.phoneNumber)).toEqual(['+14155550111', '+14155550112']);
    expect(decode((await visitor.get(OWN)).body)).toContain(
      'Imported: 2 numbers added; skipped 1 repeated in the file.',
    );
  });

  it('imports nothing from a file with a bad row, then offers to import the good rows with the bad ones listed', async () => {
    await clear();
    const csv = 'phone_number,reason\n+14155550121,ok\n555-01,short\n+14155550122,\nnot a number,x\n';
    const refused = await upload(csv);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Nothing was imported');
    // The form comes back with "import the good rows" chosen.
    expect(refused.body).toMatch(/<input type="radio" name="mode" value="good_rows" checked>/);
    expect(await entries()).toEqual([]);

    const partly = await upload(csv, { mode: 'good_rows' });
    expect(partly.status).toBe(200);
    const body = decode(partly.body);
    expect(body).toContain('Imported 2 numbers; these 2 rows were left out (fix them and import them again):');
    expect(body).toContain('<li><strong>Line 3</strong>: "555-01" is not a phone number');
    expect(body).toContain('<li><strong>Line 5</strong>: "not a number" is not a phone number');
    expect((await entries()).map((e) => e.phoneNumber)).toEqual(['+14155550121', '+14155550122']);
  });
});

describe('one import at a time per list, a few an hour', () => {
  const refusals = () =>
    prismaOf(app).auditEntry.findMany({
      where: { accountId: tenant.accountId, action: 'do_not_call_import_refused' },
      select: { detail: true },
    });

  it('refuses an import while another of the list is under way (429, Retry-After), audited', async () => {
    // Another replica's import, its heartbeat fresh.
    await upsertDoNotCallImport(prismaOf(app), {
      where: { accountId: tenant.accountId },
      create: {
        accountId: tenant.accountId,
        importId: '00000000-0000-4000-8000-000000000001',
        heartbeatAt: app.now(),
        windowStartedAt: app.now(),
        windowCount: 1,
      },
      update: { heartbeatAt: app.now(), importId: '00000000-0000-4000-8000-000000000001' },
    });
    const res = await upload('+14155550131\n');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(decode(res.body)).toContain('Another import of this list is under way');
    expect(await refusals()).toEqual([
      { detail: { file: 'list.csv', why: 'Another import of this list is under way: try again when it is done.' } },
    ]);

    // Its heartbeat stopped two minutes ago: the process died, and the next import takes over.
    await forceDoNotCallImport(prismaOf(app), {
      where: { accountId: tenant.accountId },
      data: { heartbeatAt: new Date(app.now().getTime() - 3 * 60_000) },
    });
    expect((await upload('+14155550131\n')).status).toBe(303);
  });

  it(`refuses an import beyond ${IMPORTS_PER_HOUR} in an hour`, async () => {
    await forceDoNotCallImport(prismaOf(app), {
      where: { accountId: tenant.accountId },
      data: { heartbeatAt: null, windowStartedAt: app.now(), windowCount: IMPORTS_PER_HOUR },
    });
    const res = await upload('+14155550132\n');
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(3000);
    expect((await refusals()).at(-1)).toEqual({
      detail: { file: 'list.csv', why: `This list has had ${IMPORTS_PER_HOUR} imports in the last hour.` },
    });
  });
});
