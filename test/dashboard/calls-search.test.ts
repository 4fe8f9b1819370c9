// The Calls list's searches and columns (issue 24, point 1): a number prefix, a name prefix in any case, one
// metadata key/value (a number-looking value matches the JSON number and the string), a call id; each within the
// viewer's accounts and together with the other filters; a search matching more calls than its index is asked for
// (SEARCH_CANDIDATES_MAX) pages exactly as one matching few; the metadata column each user chooses and keeps; the
// status badge with its reason, a waiting call's place in line, and whether the page shows a call still going.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { SEARCH_CANDIDATES_MAX } from '../../src/storage/call-history.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';
import { insertCalls, forceCall, insertCallRow, nameCalls } from '../helpers/seed.js';

let app: App;
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const visitors = {} as Record<'A' | 'A1' | 'B' | 'A2nd', Visitor>;

const CALL_LINK = /href="\/dashboard\/calls\/([0-9a-f-]{36})"/g;
const listed = (body: string) => [...body.matchAll(CALL_LINK)].map((m) => m[1]!);
const olderLink = (body: string) => /<a href="([^"]+)" rel="next">Older<\/a>/.exec(body)?.[1]?.replace(/&amp;/g, '&');
const rowOf = (body: string, id: string) => body.split('<tr>').find((r) => r.includes(id)) ?? '';

/** One finished call of `tenant` with these fields; returns its id. */
async function call(
  tenant: Tenant,
  fields: { phone?: string; name?: string | null; metadata?: string; at?: Date; status?: 'completed' | 'failed' },
): Promise<string> {
  const [id] = await insertCalls(prismaOf(app), {
    accountId: tenant.accountId,
    agentId: tenant.agentId,
    count: 1,
    createdAt: fields.at ?? new Date('2054-10-01T12:00:00Z'),
    phoneNumber: fields.phone ?? '+14155552671',
    metadataJson: fields.metadata ?? '{}',
    status: fields.status ?? 'completed',
  });
  if (fields.name !== undefined) await forceCall(prismaOf(app), id!, { name: fields.name });
  return id!;
}

/** Ids of the calls the viewer's Calls list shows for `query` (every page, following "Older"). */
async function search(visitor: Visitor, query: string): Promise<string[]> {
  const ids: string[] = [];
  let url: string | undefined = `/dashboard/calls?${query}`;
  while (url) {
    const res = await visitor.get(url);
    expect(res.status, `${url}: ${res.body.slice(0, 300)}`).toBe(200);
    ids.push(...listed(res.body));
    url = olderLink(res.body);
  }
  return ids;
}
const sorted = (ids: string[]) => [...ids].sort();

const made = {} as Record<
  'sf' | 'sfMobile' | 'ny' | 'uk' | 'janeA1' | 'janet' | 'maryJane' | 'crmNumber' | 'crmString' | 'crmOther' | 'vip',
  string
> & { b: string };

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenants.A = await createTenant(app.storage, { name: 'Acme Agency' });
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client One' });
  tenants.B = await createTenant(app.storage);

  made.sf = await call(tenants.A, { phone: '+14155550001', name: 'Jane Doe', metadata: '{"crm_id":"x1"}' });
  made.sfMobile = await call(tenants.A1, { phone: '+14159990002', name: 'JANE ROE' });
  made.ny = await call(tenants.A, { phone: '+12125550003', name: 'Jim' });
  made.uk = await call(tenants.A1, { phone: '+442071234567', name: null });
  made.janeA1 = await call(tenants.A1, { phone: '+442071234568', name: 'jane smith' });
  made.janet = await call(tenants.A, { phone: '+14155550009', name: 'Janet' });
  made.maryJane = await call(tenants.A, { phone: '+14155550010', name: 'Mary Jane' });
  made.crmNumber = await call(tenants.A, { metadata: '{"crm_id":123,"note":"first"}' });
  made.crmString = await call(tenants.A1, { metadata: '{"note":"second","crm_id":"123"}' });
  made.crmOther = await call(tenants.A, { metadata: '{"crm_id":1234}' });
  made.vip = await call(tenants.A, { metadata: '{"vip":true,"tags":["a","b"]}' });
  made.b = await call(tenants.B, {
    phone: '+14155550001',
    name: 'Jane Doe',
    metadata: '{"crm_id":123,"vip":true}',
  });

  for (const [name, accountId] of [
    ['A', tenants.A.accountId],
    ['A1', tenants.A1.accountId],
    ['B', tenants.B.accountId],
    ['A2nd', tenants.A.accountId],
  ] as const) {
    const email = `${name.toLowerCase()}@search.example`;
    await createUserWithPassword(app.storage, accountId, email);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.9.0.${Object.keys(visitors).length}`;
    expect((await visitors[name].signIn(email)).status).toBe(303);
  }
});

describe('searching the Calls list', () => {
  it('finds calls by the start of the number, separators ignored, within the viewer’s accounts', async () => {
    expect(sorted(await search(visitors.A, 'number=%2B1415'))).toEqual(
      sorted([
        made.sf,
        made.sfMobile,
        made.janet,
        made.maryJane,
        made.crmNumber,
        made.crmString,
        made.crmOther,
        made.vip,
      ]),
    );
    expect(sorted(await search(visitors.A, `number=${encodeURIComponent('+1 (415) 555-00')}`))).toEqual(
      sorted([made.sf, made.janet, made.maryJane]),
    );
    // The + may be left out; a whole number finds that number.
    expect(sorted(await search(visitors.A, 'number=44'))).toEqual(sorted([made.janeA1, made.uk]));
    expect(await search(visitors.A, 'number=%2B14155550001')).toEqual([made.sf]);
    expect(sorted(await search(visitors.A1, 'number=%2B1415'))).toEqual(sorted([made.sfMobile, made.crmString]));
    expect(await search(visitors.B, 'number=%2B1415')).toEqual([made.b]);
    expect(await search(visitors.A, 'number=%2B19')).toEqual([]);
    const hint = (await visitors.A.get('/dashboard/calls')).body;
    expect(hint).toContain('The number matches every number that starts with what you type');
    expect(hint).not.toContain('matched exactly');
  });

  it('finds calls by the start of the name, in any case, and not by a word in its middle', async () => {
    expect(sorted(await search(visitors.A, 'name=jane'))).toEqual(
      sorted([made.sf, made.sfMobile, made.janeA1, made.janet]),
    );
    expect(sorted(await search(visitors.A, 'name=JAN'))).toEqual(
      sorted([made.sf, made.sfMobile, made.janeA1, made.janet]),
    );
    expect(await search(visitors.A, 'name=jane%20d')).toEqual([made.sf]);
    expect(await search(visitors.A1, 'name=jane%20d')).toEqual([]);
    expect(await search(visitors.A, 'name=mary')).toEqual([made.maryJane]);
    expect(await search(visitors.B, 'name=jane')).toEqual([made.b]);
    // A pattern character is a character: nothing starts with "%".
    expect(await search(visitors.A, 'name=%25')).toEqual([]);
    expect(await search(visitors.A, 'name=_')).toEqual([]);
  });

  it('finds calls by one metadata key and value: a number-looking value as the number and the string', async () => {
    expect(sorted(await search(visitors.A, 'meta_key=crm_id&meta_value=123'))).toEqual(
      sorted([made.crmNumber, made.crmString]),
    );
    expect(await search(visitors.A1, 'meta_key=crm_id&meta_value=123')).toEqual([made.crmString]);
    expect(await search(visitors.B, 'meta_key=crm_id&meta_value=123')).toEqual([made.b]);
    expect(await search(visitors.A, 'meta_key=crm_id&meta_value=x1')).toEqual([made.sf]);
    expect(await search(visitors.A, 'meta_key=crm_id&meta_value=X1')).toEqual([]);
    expect(await search(visitors.A, 'meta_key=crm_id&meta_value=12')).toEqual([]);
    expect(await search(visitors.A, 'meta_key=vip&meta_value=true')).toEqual([made.vip]);
    expect(await search(visitors.A, 'meta_key=note&meta_value=second')).toEqual([made.crmString]);
    // Together with the other filters and searches.
    expect(await search(visitors.A, `meta_key=crm_id&meta_value=123&client=${tenants.A.accountId}`)).toEqual([
      made.crmNumber,
    ]);
    expect(await search(visitors.A, 'meta_key=crm_id&meta_value=123&status=failed')).toEqual([]);
    expect(await search(visitors.A, 'meta_key=crm_id&meta_value=x1&name=jane&number=%2B1415')).toEqual([made.sf]);
    expect(await search(visitors.A, 'meta_key=crm_id&meta_value=x1&name=jim')).toEqual([]);
  });

  it('finds one call by its id, only the viewer’s, with the other searches applied', async () => {
    expect(await search(visitors.A, `call=${made.crmString}`)).toEqual([made.crmString]);
    expect(await search(visitors.A, `call=${made.crmString}&meta_key=crm_id&meta_value=123`)).toEqual([made.crmString]);
    expect(await search(visitors.A, `call=${made.crmString}&meta_key=crm_id&meta_value=124`)).toEqual([]);
    expect(await search(visitors.A, `call=${made.sf}&name=jim`)).toEqual([]);
    expect(await search(visitors.A, `call=${made.b}`)).toEqual([]);
    expect(await search(visitors.A1, `call=${made.sf}`)).toEqual([]);
  });

  it(`pages a search that matches more than ${SEARCH_CANDIDATES_MAX} calls exactly as one that matches few`, async () => {
    const tenant = await createTenant(app.storage);
    await createUserWithPassword(app.storage, tenant.accountId, 'bulk@search.example');
    const visitor = new Visitor(app);
    visitor.ip = '10.9.1.1';
    expect((await visitor.signIn('bulk@search.example')).status).toBe(303);
    // In parts: each statement stays within the pool's query timeout on a busy machine.
    const bulk = async (count: number, at: string, metadata: string, phone: string) => {
      const ids: string[] = [];
      for (let done = 0; done < count; done += 500) {
        const part = await insertCalls(prismaOf(app), {
          accountId: tenant.accountId,
          agentId: tenant.agentId,
          count: Math.min(500, count - done),
          createdAt: new Date(at),
          metadataJson: metadata,
          phoneNumber: phone,
        });
        await nameCalls(prismaOf(app), part, `Bulk ${phone}`);
        ids.push(...part);
      }
      return ids;
    };
    // Many matches, some older ones that do not match between them, and a few newest ones that match.
    const many = [
      ...(await bulk(SEARCH_CANDIDATES_MAX - 30, '2054-09-01T00:00:00Z', '{"src":"web"}', '+14155550100')),
      ...(await bulk(40, '2054-09-03T00:00:00Z', '{"src":"web"}', '+14155550100')),
    ];
    await bulk(100, '2054-09-02T00:00:00Z', '{"src":"app"}', '+14155550200');
    const newestFirst = (ids: string[]) =>
      prismaOf(app)
        .call.findMany({
          where: { id: { in: ids } },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          select: { id: true },
        })
        .then((rows) => rows.map((r) => r.id));
    const expected = await newestFirst(many);
    expect(expected.length).toBeGreaterThan(SEARCH_CANDIDATES_MAX);
    // First page, then walk every "Older" link: the same calls in the same order, however found.
    const first = await visitor.get('/dashboard/calls?meta_key=src&meta_value=web');
    expect(listed(first.body)).toEqual(expected.slice(0, 50));
    let url = olderLink(first.body);
    for (let page = 1; page < 3; page++) {
      const res = await visitor.get(url!);
      expect(listed(res.body)).toEqual(expected.slice(page * 50, page * 50 + 50));
      url = olderLink(res.body);
    }
    const byNumber = await visitor.get('/dashboard/calls?number=%2B141555501');
    expect(listed(byNumber.body)).toEqual(expected.slice(0, 50));
    const byName = await visitor.get('/dashboard/calls?name=bulk%20%2B14155550100');
    expect(listed(byName.body)).toEqual(expected.slice(0, 50));
    // Fewer than the index is asked for: the same answer from the index.
    expect(await search(visitor, 'meta_key=src&meta_value=app&name=bulk')).toHaveLength(100);
    expect(await search(visitor, 'name=bulk%20%2B14155550200')).toEqual(
      await newestFirst(await search(visitor, 'meta_key=src&meta_value=app')),
    );
  });
  it('pages a name search whose matches are all older than the newest calls, from the name index alone', async () => {
    const tenant = await createTenant(app.storage);
    await createUserWithPassword(app.storage, tenant.accountId, 'old-names@search.example');
    const visitor = new Visitor(app);
    visitor.ip = '10.9.1.2';
    expect((await visitor.signIn('old-names@search.example')).status).toBe(303);
    const named = async (count: number, at: string, name: string) => {
      const ids = await insertCalls(prismaOf(app), {
        accountId: tenant.accountId,
        agentId: tenant.agentId,
        count,
        createdAt: new Date(at),
        phoneNumber: '+14155550300',
      });
      await nameCalls(prismaOf(app), ids, name);
      return ids;
    };
    // 130 matches, then 400 newer calls that do not match: the newest calls hold no page (nor 5) of matches, so the
    // search reads its index; a name search with no other filter has no cap there.
    const older = [
      ...(await named(70, '2054-08-01T00:00:00Z', 'Old Olga')),
      ...(await named(60, '2054-08-02T00:00:00Z', 'old timer')),
    ];
    await named(400, '2054-08-03T00:00:00Z', 'Newer Caller');
    const expected = await prismaOf(app)
      .call.findMany({
        where: { id: { in: older } },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { id: true },
      })
      .then((rows) => rows.map((r) => r.id));
    const pages: string[][] = [];
    let url: string | undefined = '/dashboard/calls?name=OLD';
    while (url) {
      const res = await visitor.get(url);
      pages.push(listed(res.body));
      url = olderLink(res.body);
    }
    expect(pages.map((p) => p.length)).toEqual([50, 50, 30]);
    expect(pages.flat()).toEqual(expected);
    // With the dates: only the first day's matches.
    expect(await search(visitor, 'name=old&to=2054-08-01')).toEqual(expected.slice(60));
    expect(await search(visitor, 'name=old%20t&from=2054-08-02')).toEqual(expected.slice(0, 60));
  });
});

describe('the Calls list’s columns', () => {
  it('shows the number as the row’s link, the name, the client (the agency’s own calls as its own)', async () => {
    const { body } = await visitors.A.get('/dashboard/calls');
    const row = rowOf(body, made.sf);
    expect(row).toContain(
      `<td class="primary" data-label="Number"><a href="/dashboard/calls/${made.sf}">+14155550001</a></td>`,
    );
    expect(row).toContain('<td data-label="Name">Jane Doe</td>');
    expect(row).toContain('<td data-label="Client">Acme Agency (own)</td>');
    expect(rowOf(body, made.sfMobile)).toContain('<td data-label="Client">Client One</td>');
    expect(rowOf(body, made.uk)).toContain('<td data-label="Name"></td>');
    expect(body).toMatch(
      /<th scope="col">Number<\/th><th scope="col">Name<\/th><th scope="col">Agent<\/th><th scope="col">Client<\/th><th scope="col">Status<\/th><th scope="col">Duration<\/th><th scope="col">Created<\/th>/,
    );
  });

  it('shows the metadata key each user chooses as a column, and keeps it for that user', async () => {
    const before = await visitors.A.get('/dashboard/calls');
    expect(before.body).toContain('name="column" value=""');
    const saved = await visitors.A.submit('/dashboard/calls?name=jan', '/dashboard/calls/column', {
      column: ' crm_id ',
    });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe('/dashboard/calls?name=jan');
    const after = await visitors.A.get('/dashboard/calls');
    expect(after.body).toContain('The metadata key &quot;crm_id&quot; is shown as a column.');
    expect(after.body).toContain('<th scope="col">crm_id</th>');
    expect(after.body).toContain('name="column" value="crm_id"');
    expect(rowOf(after.body, made.crmNumber)).toContain('<td data-label="crm_id">123</td>');
    expect(rowOf(after.body, made.crmString)).toContain('<td data-label="crm_id">123</td>');
    expect(rowOf(after.body, made.sf)).toContain('<td data-label="crm_id">x1</td>');
    expect(rowOf(after.body, made.ny)).toContain('<td data-label="crm_id"></td>');
    // Remembered on the user, not the session: again after signing in anew; another user of the account has none.
    const again = new Visitor(app);
    again.ip = '10.9.2.1';
    expect((await again.signIn('a@search.example')).status).toBe(303);
    expect((await again.get('/dashboard/calls')).body).toContain('<th scope="col">crm_id</th>');
    expect((await visitors.A2nd.get('/dashboard/calls')).body).not.toContain('<th scope="col">crm_id</th>');
    // Values that are not strings show as JSON.
    await visitors.A.submit('/dashboard/calls', '/dashboard/calls/column', { column: 'tags' });
    expect(rowOf((await visitors.A.get('/dashboard/calls')).body, made.vip)).toContain(
      '<td data-label="tags">[&quot;a&quot;,&quot;b&quot;]</td>',
    );
    // Too long: refused, with the column unchanged; blank: no column.
    const long = await visitors.A.submit('/dashboard/calls', '/dashboard/calls/column', { column: 'k'.repeat(41) });
    expect(long.status).toBe(303);
    const refused = await visitors.A.get('/dashboard/calls');
    expect(refused.body).toContain('a key has at most 40 characters. The column was not changed.');
    expect(refused.body).toContain('<th scope="col">tags</th>');
    await visitors.A.submit('/dashboard/calls', '/dashboard/calls/column', { column: '' });
    const none = await visitors.A.get('/dashboard/calls');
    expect(none.body).toContain('No metadata column is shown.');
    expect(none.body).not.toContain('<th scope="col">tags</th>');
  });

  it('refuses a column form without its CSRF token, and goes back only to the Calls list', async () => {
    await visitors.A1.get('/dashboard/calls');
    const forged = await visitors.A1.request('POST', '/dashboard/calls/column', { column: 'crm_id' });
    expect(forged.status).toBe(403);
    const away = await visitors.A1.submit('/dashboard/calls', '/dashboard/calls/column', {
      column: 'crm_id',
      back: '//evil.example/x?a=1',
    });
    expect(away.status).toBe(303);
    expect(away.location).toMatch(/^\/dashboard\/calls\?/);
    await visitors.A1.submit('/dashboard/calls', '/dashboard/calls/column', { column: '' });
  });
});

describe('the status badge', () => {
  it('says what a waiting call waits for: its place in line, its window, its schedule, its retry', async () => {
    const tenant = await createTenant(app.storage);
    await createUserWithPassword(app.storage, tenant.accountId, 'waiting@search.example');
    const visitor = new Visitor(app);
    visitor.ip = '10.9.3.1';
    expect((await visitor.signIn('waiting@search.example')).status).toBe(303);
    const now = Date.now();
    const waiting = async (minutesAgo: number, data: Record<string, unknown> = {}) =>
      (
        await insertCallRow(prismaOf(app), {
          accountId: tenant.accountId,
          agentId: tenant.agentId,
          phoneNumber: '+14155552671',
          fromNumber: '+14155550100',
          notBefore: new Date(now - minutesAgo * 60_000),
          expiresAt: new Date(now + 86_400_000),
          createdAt: new Date(now - minutesAgo * 60_000),
          ...data,
        })
      ).id;
    const first = await waiting(30);
    const second = await waiting(20);
    const window = await waiting(15, { notBefore: new Date('2058-01-07T14:00:00Z'), timezone: 'America/New_York' });
    const third = await waiting(10);
    const scheduled = await waiting(5, {
      notBefore: new Date('2058-01-08T09:30:00Z'),
      scheduledAt: new Date('2058-01-08T09:30:00Z'),
    });
    const retry = await waiting(4, {
      attempt: 2,
      notBefore: new Date('2058-01-09T10:00:00Z'),
      nextAttemptAt: new Date('2058-01-09T10:00:00Z'),
      timezone: 'Europe/Paris',
    });
    const dialling = await waiting(3, { status: 'dialing' });
    const page = await visitor.get('/dashboard/calls');
    const badge = (id: string) =>
      /<span class="badge" data-tone="(\w+)">([^<]*)<\/span>/.exec(rowOf(page.body, id))?.slice(1);
    expect(badge(first)).toEqual(['wait', 'Waiting for a slot (#1 in line)']);
    expect(badge(second)).toEqual(['wait', 'Waiting for a slot (#2 in line)']);
    expect(badge(third)).toEqual(['wait', 'Waiting for a slot (#3 in line)']);
    expect(badge(window)).toEqual(['wait', 'Waiting for the window until 7 Jan, 09:00 America/New_York']);
    expect(badge(scheduled)).toEqual(['wait', 'Scheduled for 2058-01-08 09:30 UTC']);
    expect(badge(retry)).toEqual(['wait', 'Retrying at 9 Jan, 11:00 Europe/Paris']);
    expect(badge(dialling)).toEqual(['info', 'Dialling']);
    // A call still going: the page is worth refreshing; a page of ended calls is not.
    expect(page.body).toMatch(/<div id="live" hx-get="[^"]*" hx-trigger="every 5s"/);
    const ended = (await visitors.B.get('/dashboard/calls')).body;
    expect(ended).toContain('<div id="live">');
    expect(ended).not.toContain('hx-trigger');
    // Once the first is dialled, the others move up.
    await forceCall(prismaOf(app), first, { status: 'dialing' });
    const later = await visitor.get('/dashboard/calls');
    expect(rowOf(later.body, second)).toContain('Waiting for a slot (#1 in line)');
    expect(rowOf(later.body, third)).toContain('Waiting for a slot (#2 in line)');
  });

  it('says why a call failed, in words', async () => {
    const failed = await call(tenants.B, { status: 'failed' });
    expect(rowOf((await visitors.B.get('/dashboard/calls')).body, failed)).toContain(
      '<span class="badge" data-tone="bad">Failed: busy</span>',
    );
  });
});
