// Cancelling from the dashboard: "Cancel this call" on a waiting call's detail view (the call ends failed, canceled,
// with its call.failed and an audit entry), its wording once the call is dialling or has ended, a call claimed between
// the page and the POST (not cancelled; the page says so), "Cancel selected calls" on the Calls list, and tenancy:
// another tenant's call is a 404, and a list form naming one is refused as a whole (404, nothing cancelled). Each
// cancel asks first (a confirmation page: how many, cannot be undone; its button posts again, CSRF included), and the
// list's comes back to the list as it was filtered, by a relative path to the list only.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { encodeCursor } from '../../src/views/format/cursor.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, HOST, ORIGIN, Visitor, type Answer } from './helpers.js';

let app: App;
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const visitors = {} as Record<keyof typeof tenants, Visitor>;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenants.A = await createTenant(app.storage);
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId);
  tenants.B = await createTenant(app.storage);
  for (const [name, tenant] of Object.entries(tenants) as [keyof typeof tenants, Tenant][]) {
    const email = `${name.toLowerCase()}@cancel.example`;
    await createUserWithPassword(app.storage, tenant.accountId, email);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.8.0.${Object.keys(visitors).length}`;
    expect((await visitors[name].signIn(email)).status).toBe(303);
  }
});

/** A call accepted through the API; the dispatcher is off, so it waits. */
async function waiting(tenant: Tenant, phone = '+14155552671'): Promise<string> {
  const res = await trigger(app, tenant.key, { phone_number: phone }, { 'x-forwarded-proto': 'https' });
  expect(res.statusCode, res.body).toBe(200);
  return callIdOf(res);
}

const dial = (id: string) =>
  applyCallUpdate(app.storage, id, { kind: 'dialing' }, { now: new Date(), source: 'dispatcher' });
const statusOf = async (id: string) =>
  prismaOf(app).call.findUniqueOrThrow({ where: { id }, select: { status: true, failureReason: true } });
const notice = (body: string) => /<p class="notice (?:ok|error)" role="status">([^<]*)<\/p>/.exec(body)?.[1];
const decode = (text: string | undefined) => text?.replace(/&#39;/g, "'").replace(/&quot;/g, '"');

/**
 * Posts the Calls list's form with `ids` ticked (a field repeated, as a browser sends checkboxes); `confirmed` sends
 * the confirmation page's confirm=yes at once, `back` the list's query string the form carries.
 */
async function cancelSelected(
  visitor: Visitor,
  ids: string[],
  { confirmed = true, back }: { confirmed?: boolean; back?: string } = {},
): Promise<Answer> {
  await visitor.get('/dashboard/calls');
  const payload = new URLSearchParams([
    ['_csrf', visitor.lastCsrf ?? ''],
    ...ids.map((id): [string, string] => ['call', id]),
    ...(confirmed ? [['confirm', 'yes'] as [string, string]] : []),
    ...(back === undefined ? [] : [['back', back] as [string, string]]),
  ]);
  const res = await app.inject({
    method: 'POST',
    url: '/dashboard/calls/cancel',
    headers: {
      host: HOST,
      'x-forwarded-proto': 'https',
      'x-forwarded-for': visitor.ip,
      cookie: visitor.cookieHeader(),
      origin: ORIGIN,
      'content-type': 'application/x-www-form-urlencoded',
    },
    payload: payload.toString(),
  });
  return { status: res.statusCode, headers: res.headers, body: res.body, location: res.headers.location };
}

/** The hidden fields of the confirmation page's form, in order (a repeated `call` kept), and where it posts. */
function confirmation(answer: Answer): { action: string; fields: [string, string][] } {
  expect(answer.status, answer.body.slice(0, 300)).toBe(200);
  const form = /<form method="post" action="([^"]+)" class="stack cancel-confirm"[^>]*>([\s\S]*?)<\/form>/.exec(
    answer.body,
  );
  expect(form).not.toBeNull();
  const fields = [...form![2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
    (m): [string, string] => [
      m[1]!,
      m[2]!
        .replace(/&amp;/g, '&')
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"'),
    ],
  );
  return { action: form![1]!, fields };
}

/** Presses the confirmation page's button: its form, posted as a browser posts it. */
async function confirm(visitor: Visitor, answer: Answer, change: (fields: [string, string][]) => void = () => {}) {
  const { action, fields } = confirmation(answer);
  change(fields);
  const res = await app.inject({
    method: 'POST',
    url: action,
    headers: {
      host: HOST,
      'x-forwarded-proto': 'https',
      'x-forwarded-for': visitor.ip,
      cookie: visitor.cookieHeader(),
      origin: ORIGIN,
      'content-type': 'application/x-www-form-urlencoded',
    },
    payload: new URLSearchParams(fields).toString(),
  });
  return { status: res.statusCode, headers: res.headers, body: res.body, location: res.headers.location };
}

/** The page's <h1>, as a person reads it. */
const heading = (body: string) => decode(/<h1[^>]*>([^<]*)<\/h1>/.exec(body)?.[1]);

describe('cancel from the detail view', () => {
  it('cancels a waiting call: failed (canceled), its timeline, one call.failed event, an audit entry', async () => {
    const id = await waiting(tenants.A);
    const page = await visitors.A.get(`/dashboard/calls/${id}`);
    expect(page.body).toContain(`action="/dashboard/calls/${id}/cancel"`);
    expect(page.body).toContain('Cancel this call');

    // The button asks first: which call, and that it cannot be undone; nothing is cancelled yet.
    const asked = await visitors.A.submit(`/dashboard/calls/${id}`, `/dashboard/calls/${id}/cancel`);
    expect(heading(asked.body)).toBe('Cancel the call to +14155552671?');
    expect(asked.body).toContain('<strong>This cannot be undone.</strong>');
    expect(asked.body).toContain(`<a class="button secondary" href="/dashboard/calls/${id}">Keep it waiting</a>`);
    expect(await statusOf(id)).toEqual({ status: 'initiated', failureReason: null });
    // The confirmation is a form like any other: without its CSRF token it is refused.
    const forged = await confirm(visitors.A, asked, (fields) => fields.splice(0, 1));
    expect(forged.status).toBe(403);
    expect(await statusOf(id)).toEqual({ status: 'initiated', failureReason: null });

    const res = await confirm(visitors.A, asked);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/calls/${id}`);
    expect(await statusOf(id)).toEqual({ status: 'failed', failureReason: 'canceled' });
    const after = await visitors.A.get(`/dashboard/calls/${id}`);
    expect(decode(notice(after.body))).toMatch(/^The call is canceled: it will not be dialled\./);
    expect(after.body).not.toContain('Cancel this call');
    expect(after.body).not.toContain('cannot-cancel');
    expect(after.body).toMatch(/<strong>Failed: Canceled<\/strong> <span class="hint">from the dashboard<\/span>/);
    const events = await prismaOf(app).callEvent.findMany({ where: { callId: id, toStatus: 'failed' } });
    expect(events.map((e) => [e.fromStatus, e.failureReason, e.source])).toEqual([
      ['initiated', 'canceled', 'dashboard'],
    ]);
    const audit = await visitors.A.get('/dashboard/audit-log');
    expect(audit.body).toContain('Call canceled (it was still waiting; it ended failed, reason canceled)');
    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({ where: { action: 'call_canceled' } });
    expect(entry).toMatchObject({ actorKind: 'user', accountId: tenants.A.accountId, detail: { call_id: id } });

    // Confirmed again (a second tab): nothing changes.
    const again = await confirm(visitors.A, asked);
    expect(again.status).toBe(303);
    expect(decode(notice((await visitors.A.get(`/dashboard/calls/${id}`)).body))).toBe(
      'This call was already canceled.',
    );
    expect(
      await prismaOf(app).auditEntry.count({ where: { action: 'call_canceled', detail: { equals: { call_id: id } } } }),
    ).toBe(1);
  });

  it('says a call already dialling or ended cannot be canceled, and offers no button', async () => {
    const dialing = await waiting(tenants.A);
    await dial(dialing);
    const dialingPage = (await visitors.A.get(`/dashboard/calls/${dialing}`)).body;
    expect(dialingPage).not.toContain('Cancel this call');
    expect(decode(dialingPage)).toContain('This call is already being dialled: it can no longer be canceled.');

    const ended = await waiting(tenants.A);
    await applyCallUpdate(
      app.storage,
      ended,
      { kind: 'failed', reason: 'busy' },
      { now: new Date(), source: 'provider' },
    );
    const endedPage = (await visitors.A.get(`/dashboard/calls/${ended}`)).body;
    expect(endedPage).not.toContain('Cancel this call');
    expect(endedPage).toContain('This call has ended: only a call that is still waiting can be canceled.');
  });

  it('does not cancel a call dialled between the page and the POST, and says so', async () => {
    const id = await waiting(tenants.A);
    const page = await visitors.A.get(`/dashboard/calls/${id}`);
    expect(page.body).toContain('Cancel this call');
    await dial(id);
    const res = await visitors.A.request('POST', `/dashboard/calls/${id}/cancel`, {
      _csrf: visitors.A.lastCsrf!,
      confirm: 'yes',
    });
    expect(res.status).toBe(303);
    expect(await statusOf(id)).toEqual({ status: 'dialing', failureReason: null });
    // Nothing to confirm for a call no longer waiting: the first POST says so at once.
    const unconfirmed = await visitors.A.request('POST', `/dashboard/calls/${id}/cancel`, {
      _csrf: visitors.A.lastCsrf!,
    });
    expect(unconfirmed).toMatchObject({ status: 303, location: `/dashboard/calls/${id}` });
    expect(decode(notice((await visitors.A.get(`/dashboard/calls/${id}`)).body))).toBe(
      'Not canceled: the call is already being dialled, so it can no longer be canceled.',
    );
  });

  it("answers another tenant's call, and a sibling client's, with 404 and changes nothing", async () => {
    const ofB = await waiting(tenants.B);
    const ofA = await waiting(tenants.A);
    for (const [visitor, id] of [
      [visitors.A, ofB],
      [visitors.A1, ofA],
      [visitors.B, ofA],
    ] as const) {
      for (const form of [{}, { confirm: 'yes' }] as Record<string, string>[]) {
        const res = await visitor.submit('/dashboard/calls', `/dashboard/calls/${id}/cancel`, form);
        expect(res.status).toBe(404);
      }
    }
    expect(await statusOf(ofB)).toEqual({ status: 'initiated', failureReason: null });
    expect(await statusOf(ofA)).toEqual({ status: 'initiated', failureReason: null });
    // The agency manages its client's calls.
    const ofA1 = await waiting(tenants.A1);
    const asked = await visitors.A.submit(`/dashboard/calls/${ofA1}`, `/dashboard/calls/${ofA1}/cancel`);
    expect((await confirm(visitors.A, asked)).status).toBe(303);
    expect(await statusOf(ofA1)).toEqual({ status: 'failed', failureReason: 'canceled' });
  });
});

describe('cancel selected calls from the Calls list', () => {
  it('offers a box for waiting calls only, cancels the ticked ones and names those it could not cancel', async () => {
    const first = await waiting(tenants.B, '+14155550111');
    const second = await waiting(tenants.B, '+14155550112');
    const dialing = await waiting(tenants.B, '+14155550113');
    await dial(dialing);
    const list = (await visitors.B.get('/dashboard/calls')).body;
    expect(list).toContain('action="/dashboard/calls/cancel"');
    expect(list).toContain('Cancel selected calls');
    for (const id of [first, second]) expect(list).toContain(`name="call" value="${id}"`);
    expect(list).not.toContain(`name="call" value="${dialing}"`);

    // Asked first: how many of those ticked it cancels (the waiting ones), and that it cannot be undone.
    const asked = await cancelSelected(visitors.B, [first, second, dialing], { confirmed: false });
    expect(heading(asked.body)).toBe('Cancel 2 calls?');
    expect(decode(asked.body)).toContain(
      'Each of the 2 will never be dialled: each ends failed (canceled), and call.failed is sent to the webhook. <strong>This cannot be undone.</strong>',
    );
    expect(decode(asked.body)).toContain(
      '1 call of those ticked is no longer waiting (being dialled or ended): not canceled.',
    );
    expect(asked.body).toContain('<button type="submit" class="button danger">Cancel 2 calls</button>');
    expect(confirmation(asked).fields.filter(([name]) => name === 'call')).toEqual([
      ['call', first],
      ['call', second],
    ]);
    for (const id of [first, second]) expect(await statusOf(id)).toEqual({ status: 'initiated', failureReason: null });
    await dial(second);

    const res = await confirm(visitors.B, asked);
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/calls');
    // The one dialled between the confirmation and the button is named, not cancelled.
    expect(decode(notice((await visitors.B.get('/dashboard/calls')).body))).toBe(
      '1 call canceled (they will not be dialled). Not canceled: 1 call already being dialled or ended, which can no longer be canceled.',
    );
    expect(await statusOf(first)).toEqual({ status: 'failed', failureReason: 'canceled' });
    for (const id of [second, dialing]) expect(await statusOf(id)).toEqual({ status: 'dialing', failureReason: null });

    // One ticked box is one value, not a list; and a call sent twice is cancelled once.
    const third = await waiting(tenants.B, '+14155550114');
    expect((await cancelSelected(visitors.B, [third])).status).toBe(303);
    expect(decode(notice((await visitors.B.get('/dashboard/calls')).body))).toBe(
      '1 call canceled (they will not be dialled).',
    );
    expect((await cancelSelected(visitors.B, [third, third.toUpperCase()])).status).toBe(303);
    expect(decode(notice((await visitors.B.get('/dashboard/calls')).body))).toBe('1 call had already been canceled.');

    // Nothing ticked, or nothing ticked still waiting: nothing to confirm, the list says so at once.
    expect((await cancelSelected(visitors.B, [], { confirmed: false })).status).toBe(303);
    expect(decode(notice((await visitors.B.get('/dashboard/calls')).body))).toBe(
      'No call was selected: tick the waiting calls to cancel, then press the button.',
    );
  });

  it('has no form when no call of the page is waiting', async () => {
    const visitor = new Visitor(app);
    visitor.ip = '10.8.0.9';
    const client = await createClientTenant(app.storage, tenants.A.accountId);
    await createUserWithPassword(app.storage, client.accountId, 'quiet@cancel.example');
    await visitor.signIn('quiet@cancel.example');
    const id = await waiting(client);
    await dial(id);
    const list = (await visitor.get('/dashboard/calls')).body;
    expect(list).toContain(`/dashboard/calls/${id}`);
    expect(list).not.toContain('Cancel selected calls');
  });

  it("refuses the whole form with 404 when it names a call outside the viewer's accounts, cancelling none", async () => {
    const own = await waiting(tenants.A1);
    const other = await waiting(tenants.B);
    const agencys = await waiting(tenants.A);
    for (const ids of [
      [own, other],
      [own, agencys],
      [own, '00000000-0000-4000-8000-000000000000'],
      [own, 'not-a-call-id'],
    ]) {
      expect((await cancelSelected(visitors.A1, ids)).status).toBe(404);
    }
    for (const id of [own, other, agencys])
      expect(await statusOf(id)).toEqual({ status: 'initiated', failureReason: null });
    for (const ids of [
      [own, other],
      [own, 'not-a-call-id'],
    ])
      expect((await cancelSelected(visitors.A1, ids, { confirmed: false })).status).toBe(404);
    // The agency may cancel its own and its client's together.
    expect((await cancelSelected(visitors.A, [own, agencys])).status).toBe(303);
    for (const id of [own, agencys])
      expect(await statusOf(id)).toEqual({ status: 'failed', failureReason: 'canceled' });
  });
});

describe('after "Cancel selected calls", the list as it was filtered', () => {
  it('keeps the filters and the page, from the form through the confirmation to the list', async () => {
    const calls: string[] = [];
    for (let i = 0; i < 3; i++) calls.push(await waiting(tenants.B, `+1415555030${i}`));
    const filters = `status=initiated&agent=${tenants.B.agentId}&from=2020-01-01&to=2099-12-31&number=%2B141555503`;
    const newest = await visitors.B.get(`/dashboard/calls?${filters}`);
    expect(newest.status).toBe(200);
    /** The `back` of the page's "Cancel selected calls" form (the column form has one too). */
    const cancelBack = (body: string) =>
      /class="cancel-calls"[^>]*>\s*<input type="hidden" name="_csrf" value="[^"]*">\s*<input type="hidden" name="back" value="([^"]*)">/
        .exec(body)![1]!
        .replace(/&amp;/g, '&');
    const back = cancelBack(newest.body);
    const entries = (query: string) => [...new URLSearchParams(query)].sort();
    expect(entries(back)).toEqual(entries(filters));
    const older = `${filters}&before=${encodeURIComponent(encodeCursor({ createdAt: new Date(Date.now() + 60_000), id: calls[2]! }))}`;
    // A later page, as its "Older" link's cursor names it.
    const paged = await visitors.B.get(`/dashboard/calls?${older}`);
    const pagedBack = cancelBack(paged.body);
    expect(entries(pagedBack)).toEqual(entries(older));

    const asked = await cancelSelected(visitors.B, [calls[0]!, calls[1]!], { confirmed: false, back: pagedBack });
    expect(heading(asked.body)).toBe('Cancel 2 calls?');
    const keep = /<a class="button secondary" href="([^"]*)">Keep them waiting<\/a>/.exec(asked.body)![1]!;
    const listOf = (href: string) => {
      expect(href.startsWith('/dashboard/calls?')).toBe(true);
      return entries(href.slice('/dashboard/calls?'.length));
    };
    expect(listOf(keep.replace(/&amp;/g, '&'))).toEqual(entries(older));
    const done = await confirm(visitors.B, asked);
    expect(done.status).toBe(303);
    expect(listOf(done.location!)).toEqual(entries(older));
    const list = await visitors.B.get(done.location!);
    expect(list.status).toBe(200);
    expect(decode(notice(list.body))).toBe('2 calls canceled (they will not be dialled).');
  });

  it('goes only to the Calls list, with only its own parameters, whatever `back` says', async () => {
    const hostile: [string, string][] = [
      ['//evil.example/x', '/dashboard/calls'],
      ['https://evil.example/dashboard/calls?status=failed', '/dashboard/calls'],
      ['/\\evil.example', '/dashboard/calls'],
      ['status=failed&next=https://evil.example&redirect=//evil.example', '/dashboard/calls?status=failed'],
      ['status=failed&status=completed', '/dashboard/calls?status=failed'],
      [
        'number=%0D%0ALocation:%20https://evil.example',
        '/dashboard/calls?number=%0D%0ALocation%3A+https%3A%2F%2Fevil.example',
      ],
      [`name=${'x'.repeat(101)}&call=abc`, '/dashboard/calls?call=abc'],
      ['?status=initiated', '/dashboard/calls?status=initiated'],
      ['', '/dashboard/calls'],
    ];
    for (const [back, expected] of hostile) {
      const id = await waiting(tenants.B, '+14155550400');
      const res = await cancelSelected(visitors.B, [id], { back });
      expect({ back, status: res.status, location: res.location }).toEqual({ back, status: 303, location: expected });
      const asked = await cancelSelected(visitors.B, [await waiting(tenants.B, '+14155550401')], {
        confirmed: false,
        back,
      });
      const keep = /<a class="button secondary" href="([^"]*)">Keep it waiting<\/a>/.exec(asked.body)![1]!;
      expect({ back, keep: keep.replace(/&amp;/g, '&') }).toEqual({ back, keep: expected });
      expect((await confirm(visitors.B, asked)).location).toBe(expected);
    }
  });
});
