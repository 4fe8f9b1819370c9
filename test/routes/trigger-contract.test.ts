// POST /api/v1/calls/trigger against the contract: every row of the README's error table, its check order,
// the exact success body, and the JSON envelope on every path.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { callView } from '../../src/calls/call-view.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { API_ACCESS_CASES, caseName, verdictOf } from '../helpers/api-access-table.js';
import { createClientTenant, createTenant, generateKey, keyWithTypo, type Tenant } from '../helpers/fixtures.js';
import type { ErrorResponse, TriggerResponse } from '../helpers/json.js';
import { callIdOf, TRIGGER_URL, trigger } from '../helpers/trigger.js';
import { runSql } from '../helpers/seed.js';

let app: App;
let tenant: Tenant;

beforeAll(async () => {
  ({ app } = await buildTestApp());
  tenant = await createTenant(app.storage);
});

const error = (message: string) => ({ success: false, error: message });
const callCount = () => prismaOf(app).call.count();

describe('success', () => {
  it('answers exactly { success, call_id, status: initiated } and stores the call with its metadata', async () => {
    const body = {
      phone_number: '+14155552671',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      metadata: { crm_id: 'L-42', score: 7, vip: true, note: null },
    };
    const res = await trigger(app, tenant.key, body);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const json = res.json<TriggerResponse>();
    expect(Object.keys(json).sort()).toEqual(['call_id', 'status', 'success']);
    expect(json).toMatchObject({ success: true, status: 'initiated' });

    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: json.call_id }, include: { events: true } });
    expect(callView(call)).toMatchObject({
      status: 'initiated',
      agent_id: tenant.agentId,
      phone_number: body.phone_number,
      name: body.name,
      email: body.email,
      metadata: body.metadata,
    });
    expect(call.accountId).toBe(tenant.accountId);
    expect(call.fromNumber).toBe('+14155550100');
    expect(call.events).toMatchObject([{ fromStatus: null, toStatus: 'initiated', source: 'api' }]);
  });
});

describe("the spec's trigger error table", () => {
  it('400 Invalid phone number format', async () => {
    for (const phone of [
      '+1 415 555 2671',
      '+1-415-555-2671',
      '(415) 5552671',
      '14155552671',
      '+0123',
      '+1',
      '+15551234',
      '+4402071838750',
    ]) {
      const res = await trigger(app, tenant.key, { phone_number: phone });
      expect({ phone, status: res.statusCode, body: res.json<unknown>() }).toEqual({
        phone,
        status: 400,
        body: error('Invalid phone number format'),
      });
    }
  });

  it('400 Agent not found', async () => {
    const res = await trigger(app, tenant.key, {
      phone_number: '+14155552671',
      agent_id: '00000000-0000-4000-8000-000000000000',
    });
    expect([res.statusCode, res.json()]).toEqual([400, error('Agent not found')]);
  });

  it('400 No agent specified and no default agent configured', async () => {
    const noDefault = await createTenant(app.storage, { defaultAgent: false });
    const res = await trigger(app, noDefault.key);
    expect([res.statusCode, res.json()]).toEqual([400, error('No agent specified and no default agent configured')]);
  });

  it('400 Agent has no phone number assigned', async () => {
    const noPhone = await createTenant(app.storage, { phone: null });
    const res = await trigger(app, noPhone.key);
    expect([res.statusCode, res.json()]).toEqual([400, error('Agent has no phone number assigned')]);
    const explicit = await trigger(app, noPhone.key, { phone_number: '+14155552671', agent_id: noPhone.agentId });
    expect([explicit.statusCode, explicit.json()]).toEqual([400, error('Agent has no phone number assigned')]);
  });

  it('401 Invalid API key: missing, malformed, wrong scheme, unknown, revoked', async () => {
    const unknown = generateApiKey().key; // well-formed, never stored
    const typo = keyWithTypo(tenant.key, 10); // fails the checksum
    const revoked = await createTenant(app.storage);
    await generateKey(app.storage, revoked.accountId, undefined, { now: app.now() });
    for (const authorization of [
      undefined,
      '',
      'Bearer',
      `Basic ${tenant.key}`,
      `Bearer ${tenant.key}x`,
      'Bearer svc_sk_short',
      `Bearer ${unknown}`,
      `Bearer ${typo}`,
      `Bearer ${revoked.key}`,
      tenant.key,
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: TRIGGER_URL,
        headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        payload: '{"phone_number":"+14155552671"}',
      });
      expect({ authorization, status: res.statusCode, body: res.json<unknown>() }).toEqual({
        authorization,
        status: 401,
        body: error('Invalid API key'),
      });
    }
  });

  it('403 API access is disabled', async () => {
    const off = await createTenant(app.storage, { apiAccess: false });
    const res = await trigger(app, off.key);
    expect([res.statusCode, res.json()]).toEqual([403, error('API access is disabled')]);
  });

  it('403 API access requires the agency plan', async () => {
    const starter = await createTenant(app.storage, { plan: 'starter' });
    const res = await trigger(app, starter.key);
    expect([res.statusCode, res.json()]).toEqual([403, error('API access requires the agency plan')]);
  });

  it('429 Rate limit exceeded. Retry after <n> seconds.', async () => {
    const { app: limited } = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    const t = await createTenant(limited.storage);
    for (let i = 0; i < 3; i++) expect((await trigger(limited, t.key)).statusCode).toBe(200);
    const res = await trigger(limited, t.key);
    expect(res.statusCode).toBe(429);
    const seconds = Number(res.headers['retry-after']);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(res.json()).toEqual(error(`Rate limit exceeded. Retry after ${seconds} seconds.`));
  });
});

describe('check order (README, "Errors")', () => {
  it('HTTPS (proxy mode) comes before everything', async () => {
    const { app: proxied } = await buildTestApp({ env: { TLS_MODE: 'proxy' } });
    const t = await createTenant(proxied.storage);
    const plain = await trigger(proxied, null, 'not json', { 'x-forwarded-proto': 'http' });
    expect([plain.statusCode, plain.json()]).toEqual([400, error('HTTPS is required')]);
    const missing = await trigger(proxied, t.key);
    expect([missing.statusCode, missing.json()]).toEqual([400, error('HTTPS is required')]);
    const secure = await trigger(proxied, t.key, undefined, { 'x-forwarded-proto': 'https' });
    expect(secure.statusCode).toBe(200);
  });

  it('a key in the URL is refused before authentication, whatever the parameter', async () => {
    for (const query of [`api_key=${tenant.key}`, 'key=x', 'token=x', 'access_token=x', `q=${tenant.key}`]) {
      const res = await app.inject({
        method: 'POST',
        url: `${TRIGGER_URL}?${query}`,
        headers: { authorization: `Bearer ${tenant.key}` },
      });
      expect([res.statusCode, res.json()]).toEqual([400, error('API keys must be sent in the Authorization header')]);
    }
  });

  it('authentication before access, access before the body, the body before the agent', async () => {
    const off = await createTenant(app.storage, { apiAccess: false, phone: null });
    expect((await trigger(app, null, 'garbage')).statusCode).toBe(401);
    expect((await trigger(app, off.key, 'garbage')).json()).toEqual(error('API access is disabled'));
    const noPhone = await createTenant(app.storage, { phone: null });
    expect((await trigger(app, noPhone.key, 'garbage')).json<ErrorResponse>().error).toMatch(/not valid JSON/);
    expect((await trigger(app, noPhone.key, { phone_number: 'nope' })).json()).toEqual(
      error('Invalid phone number format'),
    );
    expect((await trigger(app, noPhone.key, { phone_number: '+14155552671' })).json()).toEqual(
      error('Agent has no phone number assigned'),
    );
  });

  it('the switch comes before the plan', async () => {
    const both = await createTenant(app.storage, { plan: 'starter', apiAccess: false });
    expect((await trigger(app, both.key)).json()).toEqual(error('API access is disabled'));
  });
});

describe('the API-access rule (src/domain/api-access.ts), as the key lookup applies it', () => {
  const ANSWERS = {
    in: 200,
    'switched off': error('API access is disabled'),
    plan: error('API access requires the agency plan'),
  };

  it.each(API_ACCESS_CASES.map((c) => [caseName(c), c] as const))('%s', async (_name, c) => {
    // The agency's switch is its own switch for an agency, the one above the client's for a client.
    const agency = await createTenant(app.storage, { plan: c.plan, apiAccess: c.agencySwitch ?? c.accountSwitch });
    const key =
      c.kind === 'agency'
        ? agency.key
        : (await createClientTenant(app.storage, agency.accountId, { apiAccess: c.accountSwitch })).key;
    const res = await trigger(app, key);
    const expected = ANSWERS[verdictOf(c)];
    expect(typeof expected === 'number' ? res.statusCode : [res.statusCode, res.json()]).toEqual(
      typeof expected === 'number' ? expected : [403, expected],
    );
  });
});

describe('body rules', () => {
  it.each([
    ['a missing phone_number', {}, 'phone_number is required'],
    ['a number for phone_number', { phone_number: 14155552671 }, 'phone_number must be a string'],
    ['an unknown field', { phone_number: '+14155552671', agentId: 'x' }, 'agentId is not a known field'],
    ['a malformed agent_id', { phone_number: '+14155552671', agent_id: 'agent-1' }, 'agent_id must be a UUID'],
    ['a long name', { phone_number: '+14155552671', name: 'x'.repeat(201) }, 'name must be at most 200 characters'],
    ['a bad email', { phone_number: '+14155552671', email: 'ada@' }, 'email must be a valid email address'],
    [
      'metadata that is not an object',
      { phone_number: '+14155552671', metadata: [1] },
      'metadata must be a JSON object',
    ],
    [
      'a nested metadata value',
      { phone_number: '+14155552671', metadata: { a: { b: 1 } } },
      'metadata.a must be a string (at most 500 characters), number, boolean or null',
    ],
    [
      'a long metadata string',
      { phone_number: '+14155552671', metadata: { a: 'x'.repeat(501) } },
      'metadata.a must be a string (at most 500 characters), number, boolean or null',
    ],
    [
      'a long metadata key',
      { phone_number: '+14155552671', metadata: { ['k'.repeat(41)]: 1 } },
      'metadata keys must be 1 to 40 characters',
    ],
    [
      'an empty metadata key',
      { phone_number: '+14155552671', metadata: { '': 1 } },
      'metadata keys must be 1 to 40 characters',
    ],
    [
      '51 metadata keys',
      {
        phone_number: '+14155552671',
        metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
      },
      'metadata must have at most 50 keys',
    ],
    ['an array body', [], 'Request body must be a JSON object'],
    ['a null body', null, 'Request body must be a JSON object'],
    ['a JSON string body', '"x"', 'Request body must be a JSON object'],
    [
      'an address without a dotted domain',
      { phone_number: '+14155552671', email: 'ada@localhost' },
      'email must be a valid email address',
    ],
    [
      'a top-level domain alone',
      { phone_number: '+14155552671', email: '0@com' },
      'email must be a valid email address',
    ],
    [
      '201 emoji as a name',
      { phone_number: '+14155552671', name: '😀'.repeat(201) },
      'name must be at most 200 characters',
    ],
    [
      '41 emoji as a metadata key',
      { phone_number: '+14155552671', metadata: { ['😀'.repeat(41)]: 1 } },
      'metadata keys must be 1 to 40 characters',
    ],
    [
      '501 astral characters as a metadata value',
      { phone_number: '+14155552671', metadata: { v: '𝄞'.repeat(501) } },
      'metadata.v must be a string (at most 500 characters), number, boolean or null',
    ],
    [
      'a NUL in the name',
      { phone_number: '+14155552671', name: 'a\u0000b' },
      'name must not contain control characters other than tab, line feed and carriage return, nor unpaired surrogates',
    ],
    [
      'an unpaired surrogate in a metadata value',
      { phone_number: '+14155552671', metadata: { v: 'a\ud800' } },
      'metadata.v must not contain NUL characters or unpaired surrogates',
    ],
    [
      'a NUL in a metadata key',
      { phone_number: '+14155552671', metadata: { 'a\u0000': 1 } },
      'metadata must not contain NUL characters or unpaired surrogates',
    ],
  ])('400 for %s, naming the field', async (_name, body, message) => {
    const before = await callCount();
    const res = await trigger(app, tenant.key, body);
    expect([res.statusCode, res.json()]).toEqual([400, error(message)]);
    expect(await callCount()).toBe(before);
  });

  it('counts lengths in characters (Unicode code points), not UTF-16 units: emoji and other astral characters at the exact limits', async () => {
    const at = {
      phone_number: '+14155552671',
      name: '😀'.repeat(200),
      email: 'ada@example.com',
      metadata: { ['😀'.repeat(40)]: '𝄞'.repeat(500), ['👩‍👩‍👧'.repeat(8)]: 'a😀'.repeat(250) },
    };
    const res = await trigger(app, tenant.key, at);
    expect([res.statusCode, res.body]).toEqual([200, expect.stringContaining('"success":true')]);
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });
    expect([call.name, call.metadata]).toEqual([at.name, at.metadata]);
    // The issue's own examples: 21 emoji as a key and 101 as a name were refused as too long.
    expect(
      (
        await trigger(app, tenant.key, {
          phone_number: '+14155552671',
          name: '😀'.repeat(101),
          metadata: { ['😀'.repeat(21)]: 1 },
        })
      ).statusCode,
    ).toBe(200);
  });

  it('accepts the metadata limits exactly', async () => {
    const metadata = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${'k'.repeat(38)}${String(i).padStart(2, '0')}`, 'v'.repeat(500)]),
    );
    const res = await trigger(app, tenant.key, { phone_number: '+14155552671', name: 'n'.repeat(200), metadata });
    expect(res.statusCode).toBe(200);
  });

  it('415 for a body that is not JSON, 413 beyond 32 KiB, 400 for malformed, empty and prototype-polluting JSON', async () => {
    const before = await callCount();
    const text = await trigger(app, tenant.key, 'phone_number=+14155552671', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect([text.statusCode, text.json()]).toEqual([415, error('Content-Type must be application/json')]);
    const plain = await trigger(app, tenant.key, '{"phone_number":"+14155552671"}', { 'content-type': 'text/plain' });
    expect(plain.statusCode).toBe(415);
    const big = await trigger(app, tenant.key, { phone_number: '+14155552671', name: 'x'.repeat(33 * 1024) });
    expect([big.statusCode, big.json()]).toEqual([413, error('Request body must not exceed 32768 bytes')]);
    for (const payload of [
      '{"phone_number":',
      '',
      '{"phone_number":"+14155552671","metadata":{"__proto__":{"admin":true}}}',
      '{"phone_number":"+14155552671","constructor":{"prototype":{"x":1}}}',
    ]) {
      const res = await trigger(app, tenant.key, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json<ErrorResponse>().success).toBe(false);
    }
    expect(await callCount()).toBe(before);
  });
});

describe('every error is the JSON envelope', () => {
  it('404 and 405 (with Allow), without a stack', async () => {
    const notFound = await app.inject({ method: 'GET', url: '/api/v1/calls' });
    expect([notFound.statusCode, notFound.json()]).toEqual([404, error('Route GET /api/v1/calls not found')]);
    const wrongMethod = await app.inject({ method: 'DELETE', url: TRIGGER_URL });
    expect([wrongMethod.statusCode, wrongMethod.json(), wrongMethod.headers.allow]).toEqual([
      405,
      error('Method DELETE not allowed on /api/v1/calls/trigger'),
      'POST',
    ]);
  });

  it('500 hides the cause', async () => {
    const { app: broken } = await buildTestApp();
    const t = await createTenant(broken.storage);
    await runSql(prismaOf(broken), 'ALTER TABLE calls RENAME COLUMN from_number TO from_number_gone');
    const res = await trigger(broken, t.key);
    expect([res.statusCode, res.json()]).toEqual([500, error('Internal server error')]);
    expect(res.body).not.toMatch(/from_number|column|prisma|at /i);
  });
});
