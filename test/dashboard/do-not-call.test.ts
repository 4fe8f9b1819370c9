// The Do-not-call list page: add (with a reason), refuse what is not E.164 or not a readable reason, remove, search by
// a number's beginning or a reason's words, keyset pages, CSV import (every row or none, bad rows by their line, size
// limit, duplicates skipped), CSV export (escaping, formula injection, read back as it is), the lists an agency user
// manages, "Add this number to the do-not-call list" on a call's detail view, the audit log, and CSRF. Tenancy of
// every route is in tenancy.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { DASHBOARD_IMPORT_MAX_BYTES } from '../../src/domain/do-not-call.js';
import { addToDoNotCall } from '../../src/admin/do-not-call.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';
import { clearDoNotCall, forceDoNotCallEntries, insertDoNotCallEntry } from '../helpers/seed.js';

let app: App;
const tenants = {} as Record<'A' | 'A1' | 'A2', Tenant>;
const visitors = {} as Record<'A' | 'A1', Visitor>;
const emails = { A: 'a@dnc.example', A1: 'a1@dnc.example' };

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenants.A = await createTenant(app.storage);
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client One' });
  tenants.A2 = await createClientTenant(app.storage, tenants.A.accountId);
  for (const name of ['A', 'A1'] as const) {
    await createUserWithPassword(app.storage, tenants[name].accountId, emails[name]);
    visitors[name] = new Visitor(app);
    visitors[name].ip = name === 'A' ? '10.9.0.1' : '10.9.0.2';
    expect((await visitors[name].signIn(emails[name])).status).toBe(303);
  }
});

const OWN = '/dashboard/do-not-call';
const clientList = (tenant: Tenant) => `/dashboard/clients/${tenant.accountId}/do-not-call`;
const notice = (body: string) => /<p class="notice (?:ok|error)" role="status">([^<]*)<\/p>/.exec(body)?.[1];
const decode = (text: string | undefined) =>
  text
    ?.replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const entriesOf = (tenant: Tenant) =>
  prismaOf(app).doNotCallEntry.findMany({
    where: { accountId: tenant.accountId },
    orderBy: { phoneNumber: 'asc' },
    select: { phoneNumber: true, reason: true, addedBy: true },
  });
/** The numbers a list page shows, in order. */
const numbersOn = (body: string) => [...body.matchAll(/<td[^>]*><code>(\+\d+)<\/code><\/td>/g)].map((m) => m[1]);
const auditOf = (tenant: Tenant, action: string) =>
  prismaOf(app).auditEntry.findMany({
    where: { accountId: tenant.accountId, action },
    orderBy: { createdAt: 'asc' },
    select: { actorKind: true, detail: true, ip: true },
  });
const clear = (tenant: Tenant) => clearDoNotCall(prismaOf(app), { where: { accountId: tenant.accountId } });

describe('adding and removing', () => {
  it('adds a number with a reason: shown with who and when, audited once; a second add changes nothing', async () => {
    const res = await visitors.A.submit(OWN, `${OWN}/add`, {
      phone_number: '+14155552671',
      reason: ' Asked us to stop ',
    });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${OWN}?q=%2B14155552671`);
    const page = await visitors.A.get(res.location!);
    expect(decode(notice(page.body))).toBe(
      "+14155552671 is on the agency's do-not-call list: triggers to it are refused, and no call to it was waiting.",
    );
    expect(numbersOn(page.body)).toEqual(['+14155552671']);
    expect(page.body).toContain('<td data-label="Reason">Asked us to stop</td>');
    expect(page.body).toContain(`<td data-label="Added by">${emails.A}</td>`);
    expect(await entriesOf(tenants.A)).toEqual([
      { phoneNumber: '+14155552671', reason: 'Asked us to stop', addedBy: emails.A },
    ]);
    expect(await auditOf(tenants.A, 'do_not_call_added')).toEqual([
      { actorKind: 'user', ip: '10.9.0.1', detail: { phone_number: '+14155552671', reason: 'Asked us to stop' } },
    ]);

    const again = await visitors.A.submit(OWN, `${OWN}/add`, { phone_number: '+14155552671', reason: 'other' });
    expect(decode(notice((await visitors.A.get(again.location!)).body))).toBe(
      "+14155552671 was already on the agency's do-not-call list: its entry is unchanged.",
    );
    expect((await entriesOf(tenants.A))[0]?.reason).toBe('Asked us to stop');
    expect(await auditOf(tenants.A, 'do_not_call_added')).toHaveLength(1);
  });

  it('reads a number as people write it and says the E.164 it stores; refuses what is no number', async () => {
    for (const [written, stored] of [
      ['+1 415 555 2681', '+14155552681'],
      ['(415) 555-2682', '+14155552682'],
      ['1-415-555-2683', '+14155552683'],
      ['415.555.2684', '+14155552684'],
    ] as const) {
      const res = await visitors.A.submit(OWN, `${OWN}/add`, { phone_number: written });
      expect(res.status, written).toBe(303);
      expect(res.location).toBe(`${OWN}?q=${encodeURIComponent(stored)}`);
      expect(decode(notice((await visitors.A.get(res.location!)).body))).toMatch(new RegExp(`^\\${stored} is on`));
    }
    expect((await entriesOf(tenants.A)).map((e) => e.phoneNumber)).toEqual(
      expect.arrayContaining(['+14155552681', '+14155552682', '+14155552683', '+14155552684']),
    );
    for (const [phone, reason, words] of [
      [
        '555-2671',
        '',
        '"555-2671" is not a phone number: write it in E.164 (like +14155552671), or as it is dialled in US',
      ],
      ['+1415555267x', '', 'is not a phone number'],
      ['tel:+14155552671', '', 'is not a phone number'],
      ['+14155552672', 'line\nbreak', 'A reason must not contain control characters'],
      ['+14155552672', 'x'.repeat(501), 'A reason has at most 500 characters'],
    ] as const) {
      const res = await visitors.A.submit(OWN, `${OWN}/add`, { phone_number: phone, reason });
      expect(res.status, phone).toBe(400);
      expect(decode(res.body)).toContain(words);
      // The form keeps what was typed.
      expect(res.body).toContain(`value="${html(phone)}"`);
    }
    expect((await entriesOf(tenants.A)).map((e) => e.phoneNumber)).not.toContain('+14155552672');
  });

  it("reads a number without a plus in the country of the account's agents", async () => {
    // A client whose agents call from the United Kingdom: 020 7946 0958 is a London number.
    const uk = await createClientTenant(app.storage, tenants.A.accountId, { phone: '+442079460000' });
    await visitors.A.get(clientList(uk));
    const res = await visitors.A.submit(clientList(uk), `${clientList(uk)}/add`, { phone_number: '020 7946 0958' });
    expect(res.status).toBe(303);
    expect((await entriesOf(uk)).map((e) => e.phoneNumber)).toEqual(['+442079460958']);
  });

  it('removes a number (audited with what the entry said); removing it again changes nothing', async () => {
    await visitors.A.submit(OWN, `${OWN}/add`, { phone_number: '+14155550111', reason: 'Wrong person' });
    const res = await visitors.A.submit(`${OWN}?q=%2B14155550111`, `${OWN}/remove`, { phone_number: '+14155550111' });
    expect(res.status).toBe(303);
    expect(decode(notice((await visitors.A.get(res.location!)).body))).toMatch(
      /^\+14155550111 is no longer on the list/,
    );
    expect((await entriesOf(tenants.A)).map((e) => e.phoneNumber)).not.toContain('+14155550111');
    const [removed] = await auditOf(tenants.A, 'do_not_call_removed');
    expect(removed?.detail).toMatchObject({
      phone_number: '+14155550111',
      reason: 'Wrong person',
      added_by: emails.A,
    });
    const again = await visitors.A.submit(OWN, `${OWN}/remove`, { phone_number: '+14155550111' });
    expect(decode(notice((await visitors.A.get(again.location!)).body))).toBe(
      '+14155550111 was not on the list: nothing changed.',
    );
    expect(await auditOf(tenants.A, 'do_not_call_removed')).toHaveLength(1);
  });

  it('sends a form without its CSRF token, or from another site, nowhere', async () => {
    await visitors.A.get(OWN);
    const noToken = await visitors.A.request('POST', `${OWN}/add`, { phone_number: '+14155550122' });
    expect(noToken.status).toBe(403);
    const foreign = await visitors.A.request(
      'POST',
      `${OWN}/add`,
      { _csrf: visitors.A.lastCsrf!, phone_number: '+14155550122' },
      { origin: 'https://evil.example' },
    );
    expect(foreign.status).toBe(403);
    const upload = await visitors.A.upload(
      `${OWN}/import`,
      { field: 'file', name: 'x.csv', content: 'phone_number\n+14155550122\n' },
      { _csrf: 'forged' },
    );
    expect(upload.status).toBe(403);
    expect((await entriesOf(tenants.A)).map((e) => e.phoneNumber)).not.toContain('+14155550122');
  });
});

describe('a long list', () => {
  it('pages in number order, 50 at a time, searched by a number beginning or by a reason', async () => {
    await clear(tenants.A2);
    for (let i = 0; i < 120; i++)
      await insertDoNotCallEntry(prismaOf(app), {
        data: {
          accountId: tenants.A2.accountId,
          phoneNumber: `+1415555${String(1000 + i)}`,
          reason: i % 40 === 7 ? `Complaint 100% (case ${i}) FILED` : null,
          addedBy: 'operator',
        },
      });
    await addToDoNotCall(app.storage, {
      accountId: tenants.A2.accountId,
      phoneNumber: '+442079460018',
      reason: 'under_score',
      actor: { kind: 'operator' },
      now: app.now(),
    });
    const base = clientList(tenants.A2);
    const seen: string[] = [];
    let url: string | undefined = base;
    let pages = 0;
    while (url) {
      const page = await visitors.A.get(url);
      expect(page.status).toBe(200);
      expect(page.body).toContain('121 numbers on this list');
      seen.push(...numbersOn(page.body).map(String));
      url = /<a href="([^"]+)">Next<\/a>/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(121);

    const prefix = await visitors.A.get(`${base}?q=%2B1415555100`);
    expect(numbersOn(prefix.body)).toEqual(Array.from({ length: 10 }, (_, i) => `+1415555100${i}`));
    // Digits without the plus are a number's beginning too.
    expect(numbersOn((await visitors.A.get(`${base}?q=1415555111`)).body)).toEqual(
      Array.from({ length: 10 }, (_, i) => `+1415555111${i}`),
    );
    expect(numbersOn((await visitors.A.get(`${base}?q=%2B9`)).body)).toEqual([]);
    // Words of a reason, any case; % and _ are themselves, not wildcards.
    expect(numbersOn((await visitors.A.get(`${base}?q=complaint+100%25`)).body)).toEqual([
      '+14155551007',
      '+14155551047',
      '+14155551087',
    ]);
    expect(numbersOn((await visitors.A.get(`${base}?q=e%25`)).body)).toEqual([]);
    expect(numbersOn((await visitors.A.get(`${base}?q=unde_`)).body)).toEqual([]);
    expect(numbersOn((await visitors.A.get(`${base}?q=under_`)).body)).toEqual(['+442079460018']);
  });
});

describe('CSV import', () => {
  const upload = (visitor: Visitor, base: string, content: string | Buffer) =>
    visitor.get(base).then(() => visitor.upload(`${base}/import`, { field: 'file', name: 'list.csv', content }));

  it('imports every row (BOM, CRLF, quotes), skips numbers already listed and repeated, audits the counts', async () => {
    await clear(tenants.A1);
    await addToDoNotCall(app.storage, {
      accountId: tenants.A1.accountId,
      phoneNumber: '+14155550001',
      reason: 'kept',
      actor: { kind: 'operator' },
      now: app.now(),
    });
    const csv =
      '\ufeffPhone_Number,Reason\r\n' +
      '+14155550001,"replaced? no"\r\n' +
      '+14155550002,"Said ""stop"", twice"\r\n' +
      '\r\n' +
      " '+14155550003 , '=1+1\r\n" +
      '+14155550002,again\r\n' +
      '+14155550004\r\n';
    const res = await upload(visitors.A1, OWN, csv);
    expect(res.status).toBe(303);
    expect(decode(notice((await visitors.A1.get(OWN)).body))).toBe(
      'Imported: 3 numbers added; skipped 1 already on the list and 1 repeated in the file.',
    );
    expect(await entriesOf(tenants.A1)).toEqual([
      { phoneNumber: '+14155550001', reason: 'kept', addedBy: 'operator' },
      { phoneNumber: '+14155550002', reason: 'Said "stop", twice', addedBy: emails.A1 },
      { phoneNumber: '+14155550003', reason: '=1+1', addedBy: emails.A1 },
      { phoneNumber: '+14155550004', reason: null, addedBy: emails.A1 },
    ]);
    expect(await auditOf(tenants.A1, 'do_not_call_imported')).toEqual([
      {
        actorKind: 'user',
        ip: '10.9.0.2',
        detail: { file: 'list.csv', rows: 5, added: 3, already_listed: 1, duplicates_in_file: 1 },
      },
    ]);
  });

  it('imports nothing from a file with bad rows, and names every bad row by its line', async () => {
    await clear(tenants.A1);
    const csv = [
      'phone_number,reason',
      '+14155550010,fine',
      '5550011,too short',
      '+14155550012,"two',
      'lines"',
      '+1415555001x,',
      ',only a reason',
      '+14155550013,a,b',
    ].join('\n');
    const res = await upload(visitors.A1, OWN, csv);
    expect(res.status).toBe(400);
    const problems = [...decode(res.body)!.matchAll(/<li><strong>([^<]+)<\/strong>: ([^<]+)<\/li>/g)].map(
      (m) => `${m[1]}: ${m[2]}`,
    );
    expect(problems).toEqual([
      'Line 3: "5550011" is not a phone number: write it in E.164 (like +14155552671), or as it is dialled in US',
      'Line 4: A reason must not contain control characters such as line breaks or tabs',
      'Line 6: "+1415555001x" is not a phone number: write it in E.164 (like +14155552671), or as it is dialled in US',
      'Line 7: No phone number',
      'Line 8: 3 cells, but the first line names 2 columns',
    ]);
    expect(res.body).toContain('Nothing was imported');
    expect(await entriesOf(tenants.A1)).toEqual([]);
    expect(await auditOf(tenants.A1, 'do_not_call_imported')).toHaveLength(1);
  });

  it('refuses a file that is too large, not UTF-8, headed wrongly or missing, in words', async () => {
    await clear(tenants.A1);
    const big = Buffer.alloc(DASHBOARD_IMPORT_MAX_BYTES + 10, 'phone_number\n'.repeat(1));
    const tooLarge = await upload(visitors.A1, OWN, big);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toContain('The file is larger than 2 MiB');
    // Exactly at the limit is read (and refused here for its content, not its size).
    const atLimit = await upload(visitors.A1, OWN, Buffer.alloc(DASHBOARD_IMPORT_MAX_BYTES, 'x'));
    expect(atLimit.status).toBe(400);
    expect(decode(atLimit.body)).toContain('The first line must name the columns phone_number and reason');
    expect(decode(atLimit.body)).not.toContain('x'.repeat(200));
    const latin1 = await upload(visitors.A1, OWN, Buffer.from('phone_number,reason\n+14155550020,caf\xe9\n', 'latin1'));
    expect(latin1.body).toContain('The file is not UTF-8 text');
    const header = await upload(visitors.A1, OWN, 'telefono,motivo\n+14155550020,x\n');
    expect(decode(header.body)).toContain(
      'The first line must name the columns phone_number and reason (as "Phone Number,Reason" too), or be the first number of a list without a header (found "telefono,motivo")',
    );
    const empty = await upload(visitors.A1, OWN, '');
    expect(empty.status).toBe(400);
    expect(empty.body).toContain('The file is empty');
    expect(await entriesOf(tenants.A1)).toEqual([]);
  });
});

describe('CSV export', () => {
  it('downloads the whole list, quoted as CSV, formulas defused; the file imports back as it was', async () => {
    await clear(tenants.A1);
    const reasons = ['=HYPERLINK("http://evil.example")', '+cmd', '-2', '@SUM(A1)', 'a, "quoted" one', 'plain'];
    for (const [i, reason] of reasons.entries())
      await addToDoNotCall(app.storage, {
        accountId: tenants.A1.accountId,
        phoneNumber: `+1415555002${i}`,
        reason,
        actor: { kind: 'operator' },
        now: app.now(),
      });
    const res = await visitors.A1.get(`${OWN}/export.csv`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="do-not-call-client-one.csv"');
    expect(res.headers['cache-control']).toBe('no-store');
    const lines = res.body.split('\r\n');
    // Every cell quoted: no separator (`,` here, `;` in some locales) splits one, so a formula can only be at a
    // cell's start, where it has its apostrophe.
    expect(lines[0]).toBe('\ufeff"phone_number","reason","added_by","added_at"');
    const expected = [
      `"'=HYPERLINK(""http://evil.example"")"`,
      `"'+cmd"`,
      `"'-2"`,
      `"'@SUM(A1)"`,
      '"a, ""quoted"" one"',
      '"plain"',
    ];
    for (const [i, cell] of expected.entries())
      expect(lines[i + 1]).toMatch(
        new RegExp(
          `^"\\+1415555002${i}",${cell.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')},"operator","\\d{4}-\\d\\d-\\d\\dT[^"]+"$`,
        ),
      );

    // Read back into another list: the same numbers and reasons.
    await clear(tenants.A2);
    await visitors.A.get(clientList(tenants.A2));
    const back = await visitors.A.upload(`${clientList(tenants.A2)}/import`, {
      field: 'file',
      name: 'export.csv',
      content: res.body,
    });
    expect(back.status).toBe(303);
    const imported = await entriesOf(tenants.A2);
    expect(imported.map((e) => [e.phoneNumber, e.reason])).toEqual(
      reasons.map((reason, i) => [`+1415555002${i}`, reason]),
    );
  });
});

describe('whose lists', () => {
  it("shows an agency user the agency's list and each client's; a client user only theirs, with the agency's noted", async () => {
    const agency = await visitors.A.get(OWN);
    expect(agency.body).toContain('never called by the agency or any of its clients');
    expect(agency.body).toContain(`href="${clientList(tenants.A1)}"`);
    expect(agency.body).toContain(`href="${clientList(tenants.A2)}"`);
    const client = await visitors.A1.get(OWN);
    expect(client.body).toContain('never called by Client One');
    expect(client.body).toContain('(the agency) applies to these calls too');
    expect(client.body).not.toContain('/dashboard/clients/');
    // The navigation links the page; the client's page on the agency side links the client's list.
    expect(client.body).toContain('<a href="/dashboard/do-not-call" aria-current="page">Do-not-call list</a>');
    expect((await visitors.A.get(`/dashboard/clients/${tenants.A1.accountId}`)).body).toContain(
      `href="${clientList(tenants.A1)}"`,
    );
  });
});

describe("a call's detail view", () => {
  const waiting = async (tenant: Tenant, phone: string) => {
    const res = await trigger(app, tenant.key, { phone_number: phone }, { 'x-forwarded-proto': 'https' });
    expect(res.statusCode, res.body).toBe(200);
    return callIdOf(res);
  };

  it("adds the call's number to the call's account's list and says so on the call", async () => {
    await clear(tenants.A1);
    const id = await waiting(tenants.A1, '+14155550150');
    const page = await visitors.A.get(`/dashboard/calls/${id}`);
    // An agency user looking at a client's call: the client's list.
    expect(page.body).toContain(`action="${clientList(tenants.A1)}/add"`);
    expect(page.body).toContain('Add this number to the do-not-call list');
    const res = await visitors.A.submit(`/dashboard/calls/${id}`, `${clientList(tenants.A1)}/add`, {
      reason: 'Said so on the call',
    });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/calls/${id}`);
    const after = await visitors.A.get(`/dashboard/calls/${id}`);
    expect(decode(notice(after.body))).toMatch(/^\+14155550150 is on the do-not-call list of Client One: /);
    expect(decode(after.body)).toMatch(
      /Do not call:<\/strong> On the list of Client One since .+, added by a@dnc\.example: Said so on the call\./,
    );
    expect(after.body).not.toContain('Add this number to the do-not-call list</button>');
    expect(await entriesOf(tenants.A1)).toEqual([
      { phoneNumber: '+14155550150', reason: 'Said so on the call', addedBy: emails.A },
    ]);
    // The client's user sees the same, on their own list.
    const own = await visitors.A1.get(`/dashboard/calls/${id}`);
    expect(own.body).toContain(`href="/dashboard/do-not-call?q=%2B14155550150"`);
  });

  it("shows a number on the agency's list on a client's call; the client user gets no link to that list", async () => {
    const id = await waiting(tenants.A1, '+14155550160');
    await addToDoNotCall(app.storage, {
      accountId: tenants.A.accountId,
      phoneNumber: '+14155550160',
      actor: { kind: 'operator' },
      now: app.now(),
    });
    await forceDoNotCallEntries(prismaOf(app), {
      where: { accountId: tenants.A.accountId, phoneNumber: '+14155550160' },
      data: { reason: 'agency-internal reason' },
    });
    // The client user learns that the agency's list covers it, not who listed it or why.
    const client = decode((await visitors.A1.get(`/dashboard/calls/${id}`)).body)!;
    expect(client).toContain("<strong>Do not call:</strong> On the agency's list (it covers all its clients).");
    expect(client).not.toContain('agency-internal reason');
    expect(client).not.toContain('See the list');
    const agency = decode((await visitors.A.get(`/dashboard/calls/${id}`)).body)!;
    expect(agency).toMatch(
      /On the agency's list \(it covers all its clients\) since .+, added by operator: agency-internal reason\./,
    );
    expect(agency).toContain('href="/dashboard/do-not-call?q=%2B14155550160">See the list</a>');
  });

  it('goes back to the call with the problem when the reason is refused', async () => {
    const id = await waiting(tenants.A, '+14155550170');
    const res = await visitors.A.submit(`/dashboard/calls/${id}`, `${OWN}/add`, { reason: 'a\u202eb' });
    expect(res.location).toBe(`/dashboard/calls/${id}`);
    expect(decode(notice((await visitors.A.get(`/dashboard/calls/${id}`)).body))).toMatch(
      /^A reason must not contain characters that change the direction of the text/,
    );
  });
});
