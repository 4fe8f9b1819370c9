// The published contract cannot lie: the committed files are what the code generates, the served document is valid
// OpenAPI 3.1, and every status the trigger returns is documented, with body and headers matching the document.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/admin/accounts.js';
import { addToDoNotCall } from '../../src/admin/do-not-call.js';
import type { App } from '../../src/app.js';
import { generateContract } from '../../src/openapi/generate.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { json, type ErrorResponse } from '../helpers/json.js';
import { match } from '../helpers/matchers.js';
import { trigger } from '../helpers/trigger.js';
import { insertIdempotencyRecord, runSql } from '../helpers/seed.js';

interface Doc {
  info: {
    description: string;
    license?: { name: string; identifier?: string; url?: string };
    contact?: { name?: string; url?: string; email?: string };
  };
  servers: { url: string; variables?: Record<string, { default: string }> }[];
  components: { schemas: Record<string, object> };
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; schema: Record<string, unknown> }[];
        requestBody?: { content: Record<string, { schema: object }> };
        responses: Record<
          string,
          {
            headers?: Record<string, object>;
            content?: Record<string, { schema: object; examples?: Record<string, { value: { error: string } }> }>;
          }
        >;
      }
    >
  >;
  webhooks: Record<
    string,
    { post: { operationId?: string; requestBody: { content: Record<string, { schema: { $ref: string } }> } } }
  >;
}

let app: App;
let doc: Doc;
let tenant: Tenant;
const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
(addFormats as unknown as typeof addFormats.default)(ajv);

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000', MAX_QUEUED_CALLS: '1000' } }));
  doc = (await app.inject('/api/v1/openapi.json')).json();
  ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc');
  tenant = await createTenant(app.storage);
});

const operation = () => doc.paths['/api/v1/calls/trigger']!.post!;

/** Checks a real response against the document: status documented, body valid, documented headers present. */
function conforms(res: LightMyRequestResponse, options: { expectHeaders?: boolean } = {}) {
  const documented = operation().responses[String(res.statusCode)];
  expect(documented, `status ${res.statusCode} is documented`).toBeDefined();
  const media = documented!.content!['application/json']!;
  const schema = json<Record<string, unknown>>(
    JSON.stringify(media.schema).replaceAll('"#/components', '"doc#/components'),
  );
  const validate = ajv.compile(schema);
  const body = res.json<unknown>();
  expect(validate(body), `${res.statusCode} ${res.body}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  if (options.expectHeaders !== false) {
    for (const header of Object.keys(documented!.headers ?? {})) {
      if (header === 'idempotent-replayed' && !res.headers['idempotent-replayed']) continue;
      expect(res.headers[header], `${res.statusCode} carries ${header}`).toBeDefined();
    }
  }
  if (res.statusCode !== 200 && media.examples) {
    // Examples show sample numbers (seconds, limits): compare with every number masked.
    const mask = (m: string) => m.replace(/\d+/g, '#');
    const messages = Object.values(media.examples).map((e) => mask(e.value.error));
    const { error } = res.json<ErrorResponse>();
    const isValidation = /^(\w[\w.[\]]*) (is |must )/.test(error);
    if (!isValidation)
      expect(messages, `"${error}" is one of the documented ${res.statusCode} messages`).toContain(mask(error));
  }
}

describe('published contract', () => {
  it('the committed openapi/ files are exactly what the code generates (run npm run openapi)', async () => {
    for (const [relative, content] of await generateContract()) {
      expect(await fs.readFile(path.join(PROJECT_ROOT, relative), 'utf8'), relative).toBe(content);
    }
  });

  it('the served document is valid OpenAPI 3.1, with the bearer scheme and the three webhook events', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as never);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(Object.keys(doc.webhooks).sort()).toEqual(['call.completed', 'call.failed', 'call.started']);
    expect((doc as unknown as { components: { securitySchemes: object } }).components.securitySchemes).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer' },
    });
  });

  it('is served without a key', async () => {
    expect((await app.inject('/api/v1/openapi.json')).statusCode).toBe(200);
  });
});

describe('every status of the trigger matches the document', () => {
  it('200, and the replay of an idempotent request', async () => {
    conforms(await trigger(app, tenant.key, { phone_number: '+14155552671', metadata: { a: 1 } }));
    const first = await trigger(app, tenant.key, undefined, { 'idempotency-key': 'contract-1' });
    const replay = await trigger(app, tenant.key, undefined, { 'idempotency-key': 'contract-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    conforms(first);
    conforms(replay);
  });

  it('400 for each cause', async () => {
    const noDefault = await createTenant(app.storage, { defaultAgent: false });
    const noPhone = await createTenant(app.storage, { phone: null });
    const responses = [
      await trigger(app, tenant.key, { phone_number: 'x' }),
      await trigger(app, tenant.key, {
        phone_number: '+14155552671',
        agent_id: '00000000-0000-4000-8000-000000000000',
      }),
      await trigger(app, noDefault.key),
      await trigger(app, noPhone.key),
      await trigger(app, tenant.key, '{"phone_number":'),
      await trigger(app, tenant.key, {}),
      await trigger(app, tenant.key, { phone_number: '+14155552671', extra: 1 }),
      await trigger(app, tenant.key, undefined, { 'idempotency-key': 'has space' }),
      await app.inject({ method: 'POST', url: `/api/v1/calls/trigger?api_key=${tenant.key}` }),
      await addToDoNotCall(app.storage, {
        accountId: tenant.accountId,
        phoneNumber: '+14155550199',
        actor: OPERATOR,
        now: app.now(),
      }).then(() => trigger(app, tenant.key, { phone_number: '+14155550199' })),
    ];
    for (const res of responses) {
      expect(res.statusCode).toBe(400);
      conforms(res);
    }
  });

  it('401, 403, 413, 415', async () => {
    const off = await createTenant(app.storage, { apiAccess: false });
    const starter = await createTenant(app.storage, { plan: 'starter' });
    const other = await createTenant(app.storage);
    const cases: [number, LightMyRequestResponse][] = [
      [401, await trigger(app, 'svc_sk_nope')],
      [403, await trigger(app, off.key)],
      [403, await trigger(app, starter.key)],
      [403, await trigger(app, tenant.key, { phone_number: '+14155552671', agent_id: other.agentId })],
      [413, await trigger(app, tenant.key, { phone_number: '+14155552671', name: 'x'.repeat(40_000) })],
      [415, await trigger(app, tenant.key, 'x', { 'content-type': 'text/plain' })],
    ];
    for (const [status, res] of cases) {
      expect(res.statusCode).toBe(status);
      conforms(res);
    }
  });

  it('409 and 422 (idempotency)', async () => {
    await insertIdempotencyRecord(prismaOf(app), {
      data: {
        accountId: tenant.accountId,
        key: 'in-flight',
        requestHash: 'x',
        expiresAt: new Date(Date.now() + 3600_000),
      },
    });
    const inFlight = await trigger(app, tenant.key, undefined, { 'idempotency-key': 'in-flight' });
    expect(inFlight.statusCode).toBe(422); // a different body under the key wins over "in flight"
    conforms(inFlight);
    const hash = (await prismaOf(app).idempotencyRecord.findFirstOrThrow({ where: { key: 'contract-1' } })).requestHash;
    await insertIdempotencyRecord(prismaOf(app), {
      data: {
        accountId: tenant.accountId,
        key: 'in-flight-2',
        requestHash: hash,
        expiresAt: new Date(Date.now() + 3600_000),
      },
    });
    const conflict = await trigger(app, tenant.key, undefined, { 'idempotency-key': 'in-flight-2' });
    expect(conflict.statusCode).toBe(409);
    conforms(conflict);
  });

  it('429 (rate limit and full queue), with Retry-After', async () => {
    const { app: limited } = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1', MAX_QUEUED_CALLS: '1' } });
    const t = await createTenant(limited.storage);
    await trigger(limited, t.key);
    const rateLimited = await trigger(limited, t.key);
    expect(rateLimited.statusCode).toBe(429);
    conforms(rateLimited);
    const { app: queued } = await buildTestApp({ env: { MAX_QUEUED_CALLS: '1' } });
    const q = await createTenant(queued.storage);
    await trigger(queued, q.key);
    const full = await trigger(queued, q.key);
    expect(full.statusCode).toBe(429);
    conforms(full);
  });

  it('500 and 503', async () => {
    const { app: broken } = await buildTestApp();
    const t = await createTenant(broken.storage);
    await runSql(prismaOf(broken), 'ALTER TABLE calls RENAME COLUMN from_number TO gone');
    const internal = await trigger(broken, t.key);
    expect(internal.statusCode).toBe(500);
    conforms(internal, { expectHeaders: false });

    const { app: noDb } = await buildTestApp({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/none' });
    const unavailable = await trigger(noDb, tenant.key);
    expect(unavailable.statusCode).toBe(503);
    conforms(unavailable);
  });
});

describe('the document states what the server enforces', () => {
  const schemaOf = (ref: string) =>
    doc.components.schemas[ref.replace('#/components/schemas/', '')] as Record<string, unknown>;

  it("the request body and every event's data are $refs to the published TriggerRequest and CallData; no component is an unused copy", () => {
    expect(operation().requestBody!.content['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/TriggerRequest',
    });
    for (const [name, hook] of Object.entries(doc.webhooks)) {
      const event = schemaOf(hook.post.requestBody.content['application/json']!.schema.$ref) as {
        properties: { data: object };
      };
      expect(event.properties.data, name).toEqual({ $ref: '#/components/schemas/CallData' });
    }
    const text =
      JSON.stringify({ ...doc, components: { ...doc.components, schemas: undefined } }) +
      JSON.stringify(Object.values(doc.components.schemas));
    for (const name of Object.keys(doc.components.schemas))
      expect(text, `${name} is referenced`).toContain(`"#/components/schemas/${name}"`);
  });

  it('each webhook has an operationId, servers is templated (no fixed localhost), info has a licence', () => {
    const ids = [operation(), ...Object.values(doc.webhooks).map((h) => h.post)].map(
      (o) => (o as { operationId?: string }).operationId,
    );
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.servers.length).toBeGreaterThan(0);
    for (const server of doc.servers) {
      expect(server.url.startsWith('/') || /\{\w+\}/.test(server.url), server.url).toBe(true);
      for (const name of server.url.match(/\{(\w+)\}/g) ?? [])
        expect(server.variables?.[name.slice(1, -1)]?.default).toBeTruthy();
    }
    // OpenAPI 3.1: name required; identifier (an SPDX expression) and url are mutually exclusive.
    expect(doc.info.license?.name).toBeTruthy();
    expect(doc.info.license?.identifier && doc.info.license?.url).toBeFalsy();
    expect(doc.info.description).toContain('plain HTTP gets 400 "HTTPS is required"');
    // Linters (Spectral's and Redocly's info-contact) want a contact; each deployment's operator is the one to reach.
    expect(doc.info.contact?.name).toMatch(/operator/);
  });

  it("Idempotency-Key's rules are in its parameter schema, and the schema refuses exactly what the server refuses", async () => {
    const parameter = operation().parameters!.find(
      (p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
    )!;
    expect(parameter.schema).toMatchObject({
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: match.any(String),
    });
    const validate = ajv.compile(parameter.schema);
    const keys = [
      'k',
      'k'.repeat(255),
      'k'.repeat(256),
      '',
      'has space',
      'tab\there',
      'caf\u00e9',
      '~!@#$%^&*()_+{}|:"<>?',
      '\u007f',
    ];
    for (const key of keys) {
      const res = await trigger(app, tenant.key, { phone_number: '+14155552671' }, { 'idempotency-key': key });
      expect({ key, schema: validate(key), server: res.statusCode }).toEqual({
        key,
        schema: res.statusCode === 200,
        server: res.statusCode,
      });
      if (res.statusCode !== 200)
        expect(res.json<ErrorResponse>().error).toBe('Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
  });

  it('every body rule: the published TriggerRequest refuses what the server refuses and accepts what it accepts, at the limits', async () => {
    const validate = ajv.compile(
      JSON.parse(JSON.stringify(doc.components.schemas.TriggerRequest).replaceAll('"#/components', '"doc#/components')),
    );
    const phone = '+14155552671';
    const fill = (n: number, unit: string) => unit.repeat(n);
    const probes: Record<string, unknown>[] = [
      ...[
        ['x', 200],
        ['x', 201],
        ['😀', 200],
        ['😀', 201],
        ['𝄞', 199],
        ['é', 201],
      ].map(([u, n]) => ({ phone_number: phone, name: fill(n as number, u as string) })),
      ...[
        'a\u0000b',
        'a\ud800',
        '\udc00a',
        '\udc00\ud800',
        '😀',
        '',
        ' ',
        'a\tb\r\nc',
        'a\u0001',
        'a\u007f',
        'a\u0085',
        'a\u009f',
        'a\u00a0',
      ].map((name) => ({ phone_number: phone, name })),
      ...[
        'ada@example.com',
        'ada@localhost',
        '0@com',
        'a@b.co',
        'a b@x.co',
        'ada@ex_ample.com',
        'caf\u00e9@example.com',
        'ada@-x.com',
        'a..b.@b.com',
        '.a@b.com',
        'a.@b.com',
        'a..b@b.com',
        'a@b.c',
        'a@1.2.3.4',
        '"a b"@x.com',
        'a@[127.0.0.1]',
        `${'a'.repeat(65)}@example.com`,
        `${'a'.repeat(64)}@example.com`,
        "o'brien+tag@example.co.uk",
        'a@b.xn--p1ai',
        `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.io`,
        `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(59)}.io`,
      ].map((email) => ({ phone_number: phone, email })),
      ...[
        ['k', 40],
        ['k', 41],
        ['😀', 40],
        ['😀', 41],
        ['👩‍👩‍👧', 8],
        ['𝄞', 0],
      ].map(([u, n]) => ({ phone_number: phone, metadata: { [fill(n as number, u as string)]: 1 } })),
      ...['a\u0000', 'a\ud800', '\udfff'].map((key) => ({ phone_number: phone, metadata: { [key]: 1 } })),
      ...[
        ['v', 500],
        ['v', 501],
        ['𝄞', 500],
        ['𝄞', 501],
      ].map(([u, n]) => ({ phone_number: phone, metadata: { v: fill(n as number, u as string) } })),
      ...['v\u0000', 'v\ud800'].map((v) => ({ phone_number: phone, metadata: { v } })),
      { phone_number: phone, metadata: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i])) },
      { phone_number: phone, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) },
      { phone_number: phone, metadata: { a: { b: 1 } } },
      ...['bad', '+1 415 555 2671', '+0123', '+1', '14155552671', '+4915123456789'].map((phone_number) => ({
        phone_number,
      })),
      { phone_number: phone, agent_id: 'agent-1' },
      { phone_number: phone, extra: 1 },
      {},
    ];
    // Generated: strings of astral characters, NUL and surrogate halves around each length limit.
    const clean = fc.constantFrom('a', 'é', '😀', '𝄞', '\u200d');
    const any = fc.constantFrom('a', '😀', '\u0000', '\ud800', '\udc00');
    const near = (limit: number) => {
      const length = { minLength: Math.max(0, limit - 3), maxLength: limit + 3 };
      return fc.oneof(
        fc.string({ unit: clean, ...length }),
        fc.string({ unit: clean, ...length }),
        fc.string({ unit: any, ...length }),
      );
    };
    for (const [name, key, value] of fc.sample(fc.tuple(near(200), near(40), near(500)), { numRuns: 20, seed: 12 })) {
      probes.push(
        { phone_number: phone, name },
        { phone_number: phone, metadata: { [key || 'k']: 1 } },
        { phone_number: phone, metadata: { v: value } },
      );
    }
    const disagreements: string[] = [];
    const verdicts = { accepted: 0, refused: 0 };
    for (const body of probes) {
      const res = await trigger(app, tenant.key, body);
      const schema = validate(body) === true;
      const server = res.statusCode === 200;
      // The one rule no JSON Schema can state: a possible number for its country (the field's description says so).
      const possibleNumberRule = schema && !server && res.json<ErrorResponse>().error === 'Invalid phone number format';
      verdicts[server ? 'accepted' : 'refused']++;
      if (schema !== server && !possibleNumberRule)
        disagreements.push(
          `${JSON.stringify(body).slice(0, 120)}: schema ${schema}, server ${res.statusCode} ${res.body.slice(0, 100)}`,
        );
    }
    expect(disagreements).toEqual([]);
    expect(verdicts.accepted).toBeGreaterThan(20);
    expect(verdicts.refused).toBeGreaterThan(40);
    const phoneSchema = (
      doc.components.schemas.TriggerRequest as { properties: Record<string, { description: string }> }
    ).properties.phone_number!;
    expect(phoneSchema.description).toMatch(/possible number/);
    expect((await trigger(app, tenant.key, { phone_number: '+1415555' })).json<ErrorResponse>().error).toBe(
      'Invalid phone number format',
    );
  });
});
