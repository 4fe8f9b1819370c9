// The published contract cannot lie: the committed files are what the code generates, the served document is valid
// OpenAPI 3.1, and every status the trigger returns is documented, with body and headers matching the document.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { generateContract } from '../../src/openapi/generate.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { buildTestApp } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';

interface Doc {
  components: { schemas: Record<string, object> };
  paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, object>; content?: Record<string, { schema: object; examples?: Record<string, { value: { error: string } }> }> }> }>>;
  webhooks: Record<string, unknown>;
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
  tenant = await createTenant(app.prisma);
});

const operation = () => doc.paths['/api/v1/calls/trigger']!.post!;

/** Checks a real response against the document: status documented, body valid, documented headers present. */
function conforms(res: LightMyRequestResponse, options: { expectHeaders?: boolean } = {}) {
  const documented = operation().responses[String(res.statusCode)];
  expect(documented, `status ${res.statusCode} is documented`).toBeDefined();
  const media = documented!.content!['application/json']!;
  const schema = JSON.parse(JSON.stringify(media.schema).replaceAll('"#/components', '"doc#/components'));
  const validate = ajv.compile(schema);
  const body = res.json();
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
    const isValidation = /^(\w[\w.[\]]*) (is |must )/.test(body.error);
    if (!isValidation) expect(messages, `"${body.error}" is one of the documented ${res.statusCode} messages`).toContain(mask(body.error));
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
    expect((doc as unknown as { components: { securitySchemes: object } }).components.securitySchemes).toMatchObject({ bearerAuth: { type: 'http', scheme: 'bearer' } });
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
    const noDefault = await createTenant(app.prisma, { defaultAgent: false });
    const noPhone = await createTenant(app.prisma, { phone: null });
    const responses = [
      await trigger(app, tenant.key, { phone_number: 'x' }),
      await trigger(app, tenant.key, { phone_number: '+14155552671', agent_id: '00000000-0000-4000-8000-000000000000' }),
      await trigger(app, noDefault.key),
      await trigger(app, noPhone.key),
      await trigger(app, tenant.key, '{"phone_number":'),
      await trigger(app, tenant.key, {}),
      await trigger(app, tenant.key, { phone_number: '+14155552671', extra: 1 }),
      await trigger(app, tenant.key, undefined, { 'idempotency-key': 'has space' }),
      await app.inject({ method: 'POST', url: `/api/v1/calls/trigger?api_key=${tenant.key}` }),
    ];
    for (const res of responses) {
      expect(res.statusCode).toBe(400);
      conforms(res);
    }
  });

  it('401, 403, 413, 415', async () => {
    const off = await createTenant(app.prisma, { apiAccess: false });
    const starter = await createTenant(app.prisma, { plan: 'starter' });
    const other = await createTenant(app.prisma);
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
    await app.prisma.idempotencyRecord.create({ data: { accountId: tenant.accountId, key: 'in-flight', requestHash: 'x', expiresAt: new Date(Date.now() + 3600_000) } });
    const inFlight = await trigger(app, tenant.key, undefined, { 'idempotency-key': 'in-flight' });
    expect(inFlight.statusCode).toBe(422); // a different body under the key wins over "in flight"
    conforms(inFlight);
    const hash = (await app.prisma.idempotencyRecord.findFirstOrThrow({ where: { key: 'contract-1' } })).requestHash;
    await app.prisma.idempotencyRecord.create({ data: { accountId: tenant.accountId, key: 'in-flight-2', requestHash: hash, expiresAt: new Date(Date.now() + 3600_000) } });
    const conflict = await trigger(app, tenant.key, undefined, { 'idempotency-key': 'in-flight-2' });
    expect(conflict.statusCode).toBe(409);
    conforms(conflict);
  });

  it('429 (rate limit and full queue), with Retry-After', async () => {
    const { app: limited } = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1', MAX_QUEUED_CALLS: '1' } });
    const t = await createTenant(limited.prisma);
    await trigger(limited, t.key);
    const rateLimited = await trigger(limited, t.key);
    expect(rateLimited.statusCode).toBe(429);
    conforms(rateLimited);
    const { app: queued } = await buildTestApp({ env: { MAX_QUEUED_CALLS: '1' } });
    const q = await createTenant(queued.prisma);
    await trigger(queued, q.key);
    const full = await trigger(queued, q.key);
    expect(full.statusCode).toBe(429);
    conforms(full);
  });

  it('500 and 503', async () => {
    const { app: broken } = await buildTestApp();
    const t = await createTenant(broken.prisma);
    await broken.prisma.$executeRawUnsafe('ALTER TABLE calls RENAME COLUMN from_number TO gone');
    const internal = await trigger(broken, t.key);
    expect(internal.statusCode).toBe(500);
    conforms(internal, { expectHeaders: false });

    const { app: noDb } = await buildTestApp({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/none' });
    const unavailable = await trigger(noDb, tenant.key);
    expect(unavailable.statusCode).toBe(503);
    conforms(unavailable);
  });
});
