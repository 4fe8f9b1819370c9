// Hostile input, property-based (fast-check): >= 20,000 generated requests must never get a 5xx, always get the JSON envelope, and change rows only for 200s.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { BODY_LIMIT } from '../../src/app.js';
import { createAgent } from '../../src/admin/agents.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { E164_PATTERN, isValidE164 } from '../../src/domain/phone-number.js';
import { stableStringify } from '../../src/domain/stable-json.js';
import { errorMessage } from '../../schemas/error-codes.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, generateKey, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, TRIGGER_URL } from '../helpers/trigger.js';
import { UNLIMITED, countRows, envelopeProblem, rawHttp, rowDelta, show } from './helpers.js';
import { isUuid } from '../../schemas/uuid.js';

// ---------------------------------------------------------------------------------------------------------------
// The app and its tenants
// ---------------------------------------------------------------------------------------------------------------

let app: App;
let port: number;
/** Several agencies: acceptances of one account serialise on its row lock, so spreading requests keeps batches fast. */
let agencies: Tenant[];
let client: Tenant; // a client of agencies[0]: its agent is usable with agencies[0]'s key
let foreignAgentId: string; // an agent of an agency no key here belongs to
/** Each tenant's second agent, not its default: agent_id then really selects something. */
const secondAgent = new Map<Tenant, string>();
let keys: { revoked: string; unknown: string; starter: string; off: string };

const MALFORMED = errorMessage('MALFORMED_JSON');
const TOO_LARGE = errorMessage('BODY_TOO_LARGE', { limit: BODY_LIMIT });
const UNSUPPORTED = errorMessage('UNSUPPORTED_MEDIA_TYPE');
const INVALID_KEY = errorMessage('INVALID_API_KEY');
const IDEMPOTENCY_INVALID = errorMessage('IDEMPOTENCY_KEY_INVALID');
const INVALID_PHONE = errorMessage('INVALID_PHONE_NUMBER');

/** Possible numbers of several countries (checked in beforeAll, so a valid body really is valid). */
const PHONES = ['+14155552671', '+442071838750', '+33612345678', '+61412345678', '+819012345678', '+4915112345678'];
const FIELDS = ['phone_number', 'agent_id', 'name', 'email', 'metadata'] as const;
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];

/** Object.prototype and friends as they were before any request: compared after the pollution property. */
const PROTOTYPES = {
  Object: Object.prototype,
  Array: Array.prototype,
  Function: Function.prototype,
  String: String.prototype,
};
const pristine = Object.fromEntries(
  Object.entries(PROTOTYPES).map(([name, proto]) => [name, Reflect.ownKeys(proto).map(String).sort()]),
);

beforeAll(async () => {
  // No dispatcher or webhook worker: the only writes are the trigger's, so row deltas are exact.
  ({ app } = await buildTestApp({ env: { ...UNLIMITED } }));
  agencies = [];
  for (let i = 0; i < 4; i++) agencies.push(await createTenant(app.storage));
  client = await createClientTenant(app.storage, agencies[0]!.accountId);
  foreignAgentId = (await createTenant(app.storage)).agentId;
  // Endpoints exist, so any event written by mistake would show up as a webhook_deliveries row.
  for (const t of [...agencies, client])
    await setWebhook(app.storage, t.accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: app.now() });
  const rotated = await createTenant(app.storage);
  await generateKey(app.storage, rotated.accountId, undefined, { now: app.now() });
  keys = {
    revoked: rotated.key,
    unknown: generateApiKey().key,
    starter: (await createTenant(app.storage, { plan: 'starter' })).key,
    off: (await createTenant(app.storage, { apiAccess: false })).key,
  };
  for (const t of [...agencies, client])
    secondAgent.set(
      t,
      (
        await createAgent(app.storage, {
          accountId: t.accountId,
          name: 'Second',
          phone: '+14155550199',
          now: app.now(),
        })
      ).id,
    );
  for (const phone of PHONES) expect(isValidE164(phone), phone).toBe(true);
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as import('node:net').AddressInfo).port;
});

// ---------------------------------------------------------------------------------------------------------------
// One batch of requests: sent in parallel, then every invariant checked
// ---------------------------------------------------------------------------------------------------------------

interface Expectation {
  status?: number;
  /** The exact message, or a pattern for messages that name a generated field. */
  error?: string | RegExp;
  /** Any refusal (4xx): the generator guarantees the request is not acceptable. */
  refused?: boolean;
}

interface Req {
  tenant: Tenant;
  payload: string | Buffer;
  headers?: Record<string, string>;
  /** Omit to send a valid `Authorization: Bearer <tenant key>`. */
  authorization?: string | null;
  contentType?: string | null;
  url?: string;
  expect?: Expectation;
}

const stats = new Map<string, { requests: number; ms: number; statuses: Record<number, number> }>();
let sent = 0;
const startedAt = Date.now();

/** The JSON a 200 must have stored, or undefined if the payload is not JSON (then a 200 is itself a failure). */
function parsed(payload: string | Buffer): Record<string, unknown> | undefined {
  try {
    // Fastify ignores a leading BOM (RFC 8259 allows that), so the stored body is the JSON after it.
    // Through the bytes actually sent: inject encodes a string payload as UTF-8, a lone surrogate becoming U+FFFD.
    const value: unknown = JSON.parse(
      Buffer.from(payload)
        .toString('utf8')
        .replace(/^\ufeff/, ''),
    );
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function runBatch(property: string, requests: Req[]): Promise<void> {
  const started = performance.now();
  const before = await countRows(prismaOf(app));
  const results = await Promise.all(
    requests.map(async (req) => {
      const headers: Record<string, string> = { ...req.headers };
      if (req.authorization !== null) headers.authorization = req.authorization ?? `Bearer ${req.tenant.key}`;
      if (req.contentType !== null) headers['content-type'] = req.contentType ?? 'application/json';
      try {
        const res = await app.inject({ method: 'POST', url: req.url ?? TRIGGER_URL, headers, payload: req.payload });
        return { req, res, thrown: null };
      } catch (error) {
        return { req, res: null, thrown: error as Error };
      }
    }),
  );
  const after = await countRows(prismaOf(app));
  sent += requests.length;
  const stat = stats.get(property) ?? { requests: 0, ms: 0, statuses: {} };
  stats.set(property, stat);
  stat.requests += requests.length;

  const problems: [tag: string, message: string][] = [];
  const fresh: { req: Req; callId: string }[] = [];
  let freshWithIdempotencyKey = 0;
  for (const { req, res, thrown } of results) {
    const what = `${show(req.payload, 300)} headers=${show({ ...req.headers, authorization: req.authorization, 'content-type': req.contentType }, 300)}`;
    if (!res) {
      problems.push(['inject failed', `inject failed (${thrown?.message}) for ${what}`]);
      continue;
    }
    const status = res.statusCode;
    stat.statuses[status] = (stat.statuses[status] ?? 0) + 1;
    if (status >= 500) problems.push([`${status}`, `${status} ${res.body} for ${what}`]);
    const envelope = envelopeProblem(status, res.headers['content-type'] as string | undefined, res.body);
    if (envelope) {
      problems.push(['not the envelope', `${envelope}: ${status} ${show(res.body, 200)} for ${what}`]);
      continue;
    }
    const error = status === 200 ? undefined : res.json<{ error?: string }>().error;
    const e = req.expect;
    if (e?.status !== undefined && status !== e.status)
      problems.push([
        `expected ${e.status}, got ${status}`,
        `expected ${e.status}, got ${status} ${show(res.body, 200)} for ${what}`,
      ]);
    if (e?.error !== undefined && error !== undefined) {
      const ok = typeof e.error === 'string' ? error === e.error : e.error.test(error);
      if (!ok) problems.push(['another message', `expected error ${String(e.error)}, got ${show(error)} for ${what}`]);
    }
    if (e?.refused && (status < 400 || status >= 500))
      problems.push([`expected a refusal, got ${status}`, `expected a refusal, got ${status} for ${what}`]);
    if (status === 200 && res.headers['idempotent-replayed'] !== 'true') {
      fresh.push({ req, callId: callIdOf(res) });
      if (req.headers?.['idempotency-key'] !== undefined) freshWithIdempotencyKey++;
    }
  }

  // No row changes except the accepted calls: one call and one event each, and one idempotency record for each
  // accepted request that carried a key. Nothing else, whatever the refusals were.
  const delta = rowDelta(before, after);
  const expected = {
    calls: fresh.length,
    call_events: fresh.length,
    idempotency_records: freshWithIdempotencyKey,
    webhook_deliveries: 0,
  };
  if (stableStringify(delta) !== stableStringify(expected))
    problems.push(['rows changed', `rows changed by ${show(delta)}, expected ${show(expected)}`]);

  // "passed through unchanged": every accepted call stores exactly what was sent (a lossy store is not acceptance).
  if (fresh.length > 0) {
    const calls = await prismaOf(app).call.findMany({ where: { id: { in: fresh.map((f) => f.callId) } } });
    const byId = new Map(calls.map((c) => [c.id, c]));
    for (const { req, callId } of fresh) {
      const call = byId.get(callId);
      const body = parsed(req.payload);
      if (!call || !body) {
        problems.push([
          'accepted, not stored',
          `accepted but ${call ? 'the payload is not a JSON object' : 'no call stored'}: ${show(req.payload)}`,
        ]);
        continue;
      }
      const want = {
        account: req.tenant.accountId,
        agent: (body.agent_id as string | undefined) ?? req.tenant.agentId,
        phone: body.phone_number,
        name: body.name ?? null,
        email: body.email ?? null,
        metadata: stableStringify(body.metadata ?? {}),
      };
      const got = {
        account: call.accountId,
        agent: call.agentId,
        phone: call.phoneNumber,
        name: call.name,
        email: call.email,
        metadata: stableStringify(call.metadata),
      };
      if (stableStringify(got) !== stableStringify(want))
        problems.push(['accepted, stored altered', `accepted but stored ${show(got)} instead of ${show(want)}`]);
    }
  }
  stat.ms += performance.now() - started;
  if (problems.length > 0) throw new Error(describeProblems(problems, requests.length));
}

/** Counts by kind, then the first two examples of each kind. */
function describeProblems(problems: [string, string][], size: number): string {
  const kinds = new Map<string, string[]>();
  for (const [tag, message] of problems) kinds.set(tag, [...(kinds.get(tag) ?? []), message]);
  const summary = [...kinds].map(([tag, list]) => `${list.length}x ${tag}`).join(', ');
  return `${problems.length} problem(s) in a batch of ${size} (${summary}):\n${[...kinds.values()].flatMap((list) => list.slice(0, 2)).join('\n')}`;
}

/** Runs `runs` batches of `size` generated requests; no shrinking (each failure message names its request). */
async function check(property: string, request: fc.Arbitrary<Req>, runs: number, size = 25) {
  await assertProperty(
    fc.asyncProperty(fc.array(request, { minLength: size, maxLength: size }), (batch) => runBatch(property, batch)),
    runs,
  );
}

/**
 * fc.assert without its counterexample dump (a whole batch, keys included): the batch's own message already names
 * each offending request. The seed and path replay the run: fc.check(property, { seed, path, endOnFailure: true }).
 */
async function assertProperty<T>(property: fc.IAsyncProperty<T>, runs: number) {
  const details = await fc.check(property, { numRuns: runs, endOnFailure: true });
  if (details.failed) {
    throw new Error(
      `failed after ${details.numRuns} of ${runs} runs (seed ${details.seed}, path ${details.counterexamplePath}):\n${(details.errorInstance as Error | null)?.message ?? String(details.errorInstance)}`,
    );
  }
}

afterAll(() => {
  const seconds = (Date.now() - startedAt) / 1000;
  const lines = [...stats].map(
    ([name, s]) => `  ${name}: ${s.requests} requests in ${(s.ms / 1000).toFixed(1)} s ${JSON.stringify(s.statuses)}`,
  );
  console.log(`hostile input: ${sent} generated requests in ${seconds.toFixed(1)} s\n${lines.join('\n')}`);
});

// ---------------------------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------------------------

/** Odd but well-formed Unicode: storable as is, so an accepted body must come back byte for byte. */
const WELL_FORMED_FRAGMENTS = [
  '\u202e',
  '\u202d',
  '\u200f',
  '\u200e',
  '\u2066',
  '\u2069',
  '\u061c', // bidi overrides, marks and isolates
  '\ufeff',
  '\u200b',
  '\u200d',
  '\u2060',
  '\u00ad', // BOM, zero-width, soft hyphen
  '\u2028',
  '\u2029',
  '\u0085',
  '\r\n',
  '\r',
  '\n',
  '\t',
  '\u000b',
  '\u000c',
  '\u0001',
  '\u001b[31m',
  '\u007f', // line breaks, controls
  '\uffff',
  '\ufffe',
  '\ufffd',
  '\u{10ffff}',
  '\u{e0001}',
  '\u{1f4a9}',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '🇺🇸',
  '👍🏽', // non-characters, astral, ZWJ sequences
  'e\u0301',
  'Z\u0335\u0321\u0322\u031b\u0317\u0358\u0359',
  '\u0e47'.repeat(12),
  'ﷺ',
  'ǅ',
  'ß',
  'İ',
  'ﬃ', // combining, ligatures, case traps
  'ｆｕｌｌ',
  '١٢٣',
  '𝟙𝟚𝟛',
  '\u3000',
  'שָׁלוֹם',
  'مرحبا',
  '中文', // full-width, other digits and scripts
  '%00',
  '\\u0000',
  '\\',
  '"',
  "'",
  '`',
  '</script><script>alert(1)</script>',
  "'; DROP TABLE calls; --",
  '${jndi:ldap://x/a}',
  '{{7*7}}',
  '../../etc/passwd',
  '$where',
  '{"$gt":""}',
  'svc_sk_',
  'whsec_',
  'null',
  'undefined',
  'NaN',
  '',
];
/** What Postgres cannot store unchanged: NUL, and surrogate halves without their partner (reversed pairs too). */
const UNSTORABLE_FRAGMENTS = [
  '\u0000',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\udc00\ud800',
  'a\u0000b',
  '\ud83d',
  '\ude00x',
];

const wellFormed = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...WELL_FORMED_FRAGMENTS) },
      {
        weight: 2,
        arbitrary: fc.string({ unit: 'binary', maxLength: 6 }).map((s) => s.replaceAll('\u0000', '\u0001')),
      },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 0x1f }).map((c) => String.fromCharCode(c)) },
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(''));

/** A string with at least one unstorable piece somewhere in otherwise odd text. */
const unstorable = fc
  .tuple(
    wellFormed,
    fc.constantFrom(...UNSTORABLE_FRAGMENTS),
    fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    fc.boolean(),
    wellFormed,
  )
  .map(([a, fragment, half, useHalf, b]) => `${a}${useHalf ? half : fragment}${b}`);

/** NUL, or a surrogate half without its partner: what Postgres cannot store unchanged. */
// eslint-disable-next-line no-control-regex -- NUL is the character this looks for.
const UNSTORABLE_CHAR = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether the payload, as the server will parse it, holds an unstorable string (a key or a value). Those have their
 * own properties below; elsewhere they would stop a property at its first run and hide everything else it finds.
 */
function holdsUnstorable(payload: string | Buffer): boolean {
  let value: unknown;
  try {
    value = JSON.parse(
      Buffer.from(payload)
        .toString('utf8')
        .replace(/^\ufeff/, ''),
    );
  } catch {
    return false;
  }
  const walk = (v: unknown): boolean =>
    typeof v === 'string'
      ? UNSTORABLE_CHAR.test(v)
      : v !== null && typeof v === 'object'
        ? Object.entries(v).some(([k, inner]) => UNSTORABLE_CHAR.test(k) || walk(inner))
        : false;
  return walk(value);
}

/** A unique printable-ASCII Idempotency-Key: fast-check biases uuid() towards a few values, and a repeat would replay. */
let uniqueCounter = 0;
const uniqueKey = fc.constant(null).map(() => `hostile-${process.pid}-${++uniqueCounter}`);

/** At most `max` UTF-16 units without splitting a surrogate pair (a split would make the string unstorable). */
function clip(s: string, max: number): string {
  let out = '';
  for (const c of s) {
    if (out.length + c.length > max) break;
    out += c;
  }
  return out;
}

const anyString = fc.oneof(wellFormed, fc.string({ unit: 'binary', maxLength: 40 }), unstorable);

/** Every JSON type, plus values that sit on a rule's edge. */
const edgeValue = fc.constantFrom<unknown>(
  '',
  ' ',
  0,
  -1,
  1e308,
  -1e308,
  5e-324,
  Number.MAX_SAFE_INTEGER,
  2 ** 64,
  true,
  false,
  null,
  [],
  {},
  [null],
  { a: null },
  '+14155552671 ',
  ' +14155552671',
  '+14155552671\n',
  '+1415555267\uff11',
  '+1 415 555 2671',
  '14155552671',
  '+0',
  '+' + '1'.repeat(16),
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  'x'.repeat(201),
  'x'.repeat(501),
  'a@b',
  'a@b.c',
  '@',
  'ada@例え.jp',
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(fc.jsonValue({ maxDepth: 3 }), anyString, edgeValue);

const metadataKey = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  wellFormed.filter((s) => s.length >= 1 && s.length <= 40),
);
const metadataValue = fc.oneof(
  fc.string({ maxLength: 500 }),
  wellFormed,
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);

/** A valid body for `tenant` (its default agent, its other agent, or an agent of its client when it is the agency). */
function validBody(
  tenant: Tenant,
  agentIds: string[],
): fc.Arbitrary<{ tenant: Tenant; body: Record<string, unknown> }> {
  return fc
    .record(
      {
        phone_number: fc.constantFrom(...PHONES),
        agent_id: fc.constantFrom(...agentIds),
        name: fc.string({ maxLength: 200 }),
        email: fc.constantFrom('ada@example.com', 'a.b+c@sub.example.co.uk', "o'hara@example.org", 'x@x.io'),
        // fc.dictionary deliberately yields "__proto__" keys now and then: a valid body must not have them.
        metadata: fc
          .dictionary(metadataKey, metadataValue, { maxKeys: 8 })
          .map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !PROTO_KEYS.includes(k)))),
      },
      { requiredKeys: ['phone_number'] },
    )
    .map((body) => ({ tenant, body }));
}

/** A tenant (one of the agencies, or the client) with a valid body for it. */
function tenantWithValidBody() {
  return fc.nat({ max: agencies.length }).chain((i) => {
    const tenant = i === agencies.length ? client : agencies[i]!;
    const agents = [
      tenant.agentId,
      secondAgent.get(tenant)!,
      ...(tenant === agencies[0] ? [client.agentId, secondAgent.get(client)!] : []),
    ];
    return validBody(tenant, agents);
  });
}

/** JSON.stringify drops nothing we add with defineProperty, including an own "__proto__" key. */
function withOwn(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

type Mutation = (body: Record<string, unknown>) => unknown;

/**
 * A fresh copy of a generated value: constants such as {} are shared between requests, and a later mutation writing
 * into one would otherwise change (or even loop) other requests' bodies. JSON keeps own "__proto__" keys as data.
 */
const copy = (value: unknown): unknown => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constantFrom(...FIELDS).map((field): Mutation => (b) => {
    delete b[field];
    return b;
  }),
  fc.tuple(fc.constantFrom(...FIELDS), anyValue).map(
    ([field, value]): Mutation =>
      (b) =>
        withOwn(b, field, copy(value)),
  ),
  fc
    .tuple(
      fc.oneof(
        fc.string({ maxLength: 20 }),
        anyString,
        fc.constantFrom('Phone_Number', 'agentId', 'phone', 'id', 'success'),
      ),
      anyValue,
    )
    .map(
      ([field, value]): Mutation =>
        (b) =>
          withOwn(b, field, copy(value)),
    ),
  fc
    .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), anyValue, fc.boolean())
    .map(([key, value, inMetadata]): Mutation => (b) => {
      if (!inMetadata) return withOwn(b, key, copy(value));
      const metadata =
        b.metadata && typeof b.metadata === 'object' && !Array.isArray(b.metadata)
          ? (b.metadata as Record<string, unknown>)
          : {};
      return withOwn(b, 'metadata', withOwn(metadata, key, copy(value)));
    }),
  fc.tuple(fc.oneof(metadataKey, anyString), anyValue).map(
    ([key, value]): Mutation =>
      (b) =>
        withOwn(b, 'metadata', withOwn({ ...(b.metadata as object) }, key, copy(value))),
  ),
  // Agents that exist but are not this key's to use (403), that do not exist (400), or a client's (an agency's to use).
  fc
    .constantFrom(
      () => foreignAgentId,
      () => client.agentId,
      () => '6f1f5a86-1c1e-4c59-9a43-000000000000',
    )
    .map(
      (agent): Mutation =>
        (b) =>
          withOwn(b, 'agent_id', agent()),
    ),
  fc.integer({ min: 49, max: 60 }).map(
    (n): Mutation =>
      (b) =>
        withOwn(b, 'metadata', Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
  ),
  anyValue.map(
    (value): Mutation =>
      () =>
        copy(value),
  ),
);

const idempotencyHeader = fc.option(
  fc.oneof(
    fc.uuid(),
    fc.string({ unit: 'binary-ascii', maxLength: 300 }),
    fc.string({ minLength: 250, maxLength: 260 }),
  ),
  { nil: undefined, freq: 2 },
);

// ---------------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------------

describe('hostile input never gets a 5xx, always the envelope, and changes rows only for 200s', () => {
  it('mutated valid bodies (fields dropped, retyped, added; prototype keys; whole-body swaps) with random Idempotency-Keys', async () => {
    const request = fc
      .tuple(tenantWithValidBody(), fc.array(mutation, { maxLength: 3 }), idempotencyHeader)
      .map(([{ tenant, body }, mutations, key]): Req => {
        // Unstorable strings have their own property below: here they would stop this one at its first run.
        const mutated = mutations.reduce<unknown>(
          (b, m) => (b && typeof b === 'object' && !Array.isArray(b) ? m(b as Record<string, unknown>) : b),
          structuredClone(body),
        );
        const payload = JSON.stringify(mutated) ?? 'null';
        return {
          tenant,
          payload: holdsUnstorable(payload) ? JSON.stringify(body) : payload,
          ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
        };
      });
    await check('mutated bodies', request, 280);
  });

  it('authorization, content-type and Idempotency-Key header variants get exactly the answer the check order says', async () => {
    const k = (t: Tenant) => t.key;
    // [header value or null for absent, valid?]
    type Auth = [(t: Tenant) => string | null, boolean];
    const authorization = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.constantFrom<Auth>(
          [(t) => `Bearer ${k(t)}`, true],
          [(t) => `bearer ${k(t)}`, true],
          [(t) => `BEARER ${k(t)}`, true],
          [(t) => `Bearer    ${k(t)}`, true],
          [(t) => ` Bearer ${k(t)} `, true],
          [(t) => `\tBearer ${k(t)}\t`, true],
        ),
      },
      fc.constantFrom<Auth>(
        [() => null, false],
        [() => '', false],
        [() => 'Bearer', false],
        [() => 'Bearer ', false],
        [(t) => `Bearer\t${k(t)}`, false],
        [(t) => `Bearer${k(t)}`, false],
        [(t) => `Basic ${Buffer.from(`${k(t)}:`).toString('base64')}`, false],
        [(t) => `Token ${k(t)}`, false],
        [(t) => k(t), false],
        [(t) => `Bearer ${k(t)}x`, false],
        [(t) => `Bearer ${k(t).slice(0, -1)}`, false],
        [(t) => `Bearer ${k(t)}, Bearer ${k(t)}`, false],
        [(t) => `Bearer ${k(t)},`, false],
        [(t) => `Bearer "${k(t)}"`, false],
        [(t) => `Bearer ${k(t).toUpperCase()}`, false],
        [(t) => `Bearer ${k(t).toLowerCase()}`, false],
        [() => `Bearer ${keys.revoked}`, false],
        [() => `Bearer ${keys.unknown}`, false],
        [(t) => `Bearer ${k(t).slice(0, 20)}${k(t)[20] === 'a' ? 'b' : 'a'}${k(t).slice(21)}`, false],
        [(t) => `Bearer ${k(t)}\u0000`, false],
        [() => `Bearer ${'A'.repeat(10_000)}`, false],
        [() => `Bearer svc_sk_${'A'.repeat(49)}`, false],
        [(t) => `Bearer ${k(t)} ${k(t)}`, false],
        [(t) => `Bearer ${k(t)}=`, false],
        [(t) => `Bearer ${k(t).replace('svc_sk_', 'svc-sk-')}`, false],
        [(t) => `Bearer\u00a0${k(t)}`, false],
      ),
      fc.string({ unit: 'binary-ascii', maxLength: 80 }).map((s): Auth => [() => s, false]),
      fc.string({ maxLength: 80 }).map((s): Auth => [() => `Bearer ${s}`, false]),
    );
    // [content type or null for absent, 'json' | 'other' | 'either']
    type Kind = 'json' | 'other' | 'either';
    const contentType = fc.oneof(
      fc
        .tuple(
          fc.mixedCase(fc.constant('application/json')),
          fc.option(
            fc.mixedCase(
              fc.constantFrom('; charset=utf-8', ';charset=UTF-8', '; charset="utf-8"', ' ; charset=utf-8', ';'),
            ),
          ),
        )
        .map(([media, param]): [string | null, Kind] => [`${media}${param ?? ''}`, 'json']),
      fc.constantFrom<[string | null, Kind]>(
        [null, 'other'],
        ['', 'other'],
        ['text/plain', 'other'],
        ['text/json', 'other'],
        ['application/jsonx', 'other'],
        ['application/json-patch+json', 'other'],
        ['application/vnd.api+json', 'other'],
        ['application/x-www-form-urlencoded', 'other'],
        ['multipart/form-data; boundary=x', 'other'],
        ['*/*', 'other'],
        ['application/*', 'other'],
        ['json', 'other'],
        ['application/json,text/plain', 'other'],
        ['application/xml', 'other'],
        ['application/json\u0000', 'other'],
        // Lenient parameters: Fastify accepts them; either answer is within the contract, a 5xx is not.
        ['application/json; charset=latin1', 'either'],
        ['application/json; charset=utf-16', 'either'],
        ['application/json; foo=bar', 'either'],
      ),
      fc
        .string({ unit: 'binary-ascii', maxLength: 40 })
        .filter((s) => !/^\s*application\/json/i.test(s))
        .map((s): [string | null, Kind] => [s, 'other']),
    );
    const idempotency = fc.oneof(
      fc.constant<[string | undefined, boolean]>([undefined, true]),
      uniqueKey.map((u): [string | undefined, boolean] => [u, true]),
      fc.constantFrom<[string | undefined, boolean]>(
        ['', false],
        [' ', false],
        ['a b', false],
        ['x'.repeat(256), false],
        ['é', false],
        ['k\u0000', false],
        ['\t', false],
      ),
    );
    const special = fc.constantFrom<null | [string, number, string]>(
      null,
      null,
      null,
      null,
      null,
      null,
      ['starter', 403, errorMessage('PLAN_REQUIRED')],
      ['off', 403, errorMessage('API_ACCESS_DISABLED')],
    );

    const request = fc
      .tuple(fc.nat({ max: agencies.length - 1 }), authorization, contentType, idempotency, special, fc.uuid())
      .map(([i, [auth, authValid], [ct, kind], [idem, idemValid], spec, crm]): Req => {
        const tenant = agencies[i]!;
        const specialKey = spec && authValid ? keys[spec[0] as 'starter' | 'off'] : null;
        const value = auth(specialKey ? { ...tenant, key: specialKey } : tenant);
        const req: Req = {
          tenant,
          payload: JSON.stringify({ phone_number: '+14155552671', metadata: { crm } }),
          authorization: value,
          contentType: ct,
          ...(idem === undefined ? {} : { headers: { 'idempotency-key': idem } }),
        };
        // The README's check order: key, access, (rate limit), content type, body, Idempotency-Key.
        if (!authValid) req.expect = { status: 401, error: INVALID_KEY };
        else if (spec) req.expect = { status: spec[1], error: spec[2] };
        else if (kind === 'other') req.expect = { status: 415, error: UNSUPPORTED };
        else if (kind === 'either') req.expect = {};
        else if (!idemValid) req.expect = { status: 400, error: IDEMPOTENCY_INVALID };
        else req.expect = { status: 200 };
        return req;
      });
    await check('header variants', request, 200);
  });

  it('random text, random bytes, random JSON and byte-level mutations of valid JSON', async () => {
    const validText = tenantWithValidBody().map(({ tenant, body }) => ({ tenant, text: JSON.stringify(body) }));
    const request = fc.oneof(
      fc
        .tuple(tenantWithValidBody(), fc.string({ unit: 'binary', maxLength: 300 }))
        .map(([{ tenant }, text]): Req => ({ tenant, payload: text, expect: { refused: true } })),
      fc
        .tuple(tenantWithValidBody(), fc.uint8Array({ maxLength: 300 }))
        .map(([{ tenant }, bytes]): Req => ({ tenant, payload: Buffer.from(bytes), expect: { refused: true } })),
      fc
        .tuple(tenantWithValidBody(), fc.json({ maxDepth: 4 }))
        .map(([{ tenant }, text]): Req => ({ tenant, payload: text, expect: { refused: true } })),
      // Byte edits of a valid body: most break it, some (whitespace, a BOM) keep it valid; either way no 5xx.
      fc
        .tuple(
          validText,
          fc.nat(),
          fc.constantFrom('delete', 'insert', 'truncate', 'duplicate', 'bom', 'invalid-utf8'),
          fc.constantFrom(...'{}[]",:\\ 0e.-+tn\u0000\u00ff\ud800'.split('')),
        )
        .map(([{ tenant, text }, at, edit, char]): Req => {
          const i = at % (text.length + 1);
          const bytes = Buffer.from(text);
          const payload =
            edit === 'delete'
              ? text.slice(0, i) + text.slice(i + 1)
              : edit === 'insert'
                ? text.slice(0, i) + char + text.slice(i)
                : edit === 'truncate'
                  ? text.slice(0, i)
                  : edit === 'duplicate'
                    ? text.slice(0, i) + text.slice(Math.max(0, i - 5))
                    : edit === 'bom'
                      ? `\ufeff${text}`
                      : Buffer.concat([
                          bytes.subarray(0, i % (bytes.length + 1)),
                          Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80, 0xff]),
                          bytes.subarray(i % (bytes.length + 1)),
                        ]);
          return { tenant, payload: holdsUnstorable(payload) ? text : payload };
        }),
      fc
        .tuple(
          tenantWithValidBody(),
          fc.constantFrom(
            '',
            ' ',
            '\n',
            'null',
            'true',
            '0',
            '""',
            '[]',
            '{}',
            '{"phone_number":null}',
            '{"phone_number":"+14155552671"',
            '{"phone_number":"+14155552671"}}',
            '{"phone_number":"+14155552671",}',
            "{'phone_number':'+14155552671'}",
            '{"phone_number":+14155552671}',
            '{"phone_number":"\\ud800"}',
            '{"a":1e99999}',
            '[' + '1,'.repeat(1000) + '1]',
          ),
        )
        .map(([{ tenant }, payload]): Req => ({ tenant, payload, expect: { refused: true } })),
    );
    await check('raw bodies', request, 140);
  });

  it('deep nesting (10,000 levels within 32 KiB, 100,000 beyond) and huge bodies: 400 within the limit, 413 beyond', async () => {
    const opening = { array: ['[', ']'], object: ['{"a":', '}'], mixed: ['[{"a":', '}]'] } as const;
    const depth = fc.oneof(
      fc.integer({ min: 1, max: 50 }),
      fc.integer({ min: 9_990, max: 10_010 }), // 10,000 levels of arrays: 20 KB, inside the limit
      fc.integer({ min: 16_370, max: 16_400 }), // arrays of exactly 32 KiB give or take a few levels
      fc.integer({ min: 5_300, max: 5_600 }), // objects ({"a": per level) around the limit
      fc.integer({ min: 3_950, max: 4_150 }), // mixed ([{"a": per level) around the limit
      fc.integer({ min: 100_000, max: 120_000 }), // far beyond
    );
    const placement = fc.constantFrom('body', 'metadata value', 'unknown field', 'phone_number', 'name', 'metadata');
    const nested = fc
      .tuple(tenantWithValidBody(), fc.constantFrom<keyof typeof opening>('array', 'object', 'mixed'), depth, placement)
      .map(([{ tenant }, shape, d, where]): Req => {
        const [open, close] = opening[shape];
        // One object level as the metadata itself is a valid body ({"a":1}); it needs two to nest a value.
        const levels = where === 'metadata' && shape === 'object' ? Math.max(d, 2) : d;
        const inner = `${open.repeat(levels)}1${close.repeat(levels)}`;
        const payload =
          where === 'body'
            ? inner
            : where === 'metadata value'
              ? `{"phone_number":"+14155552671","metadata":{"k":${inner}}}`
              : where === 'metadata'
                ? `{"phone_number":"+14155552671","metadata":${inner}}`
                : where === 'unknown field'
                  ? `{"phone_number":"+14155552671","extra":${inner}}`
                  : `{"phone_number":"+14155552671","${where === 'phone_number' ? 'phone_number' : 'name'}":${inner}}`;
        const tooLarge = Buffer.byteLength(payload) > BODY_LIMIT;
        return { tenant, payload, expect: tooLarge ? { status: 413, error: TOO_LARGE } : { status: 400 } };
      });
    const huge = fc
      .tuple(
        tenantWithValidBody(),
        fc.constantFrom('name', 'metadata keys', 'array', 'whitespace', 'number'),
        fc.integer({ min: 1_000, max: 400_000 }),
      )
      .map(([{ tenant }, kind, n]): Req => {
        const payload =
          kind === 'name'
            ? JSON.stringify({ phone_number: '+14155552671', name: 'x'.repeat(n) })
            : kind === 'metadata keys'
              ? JSON.stringify({
                  phone_number: '+14155552671',
                  metadata: Object.fromEntries(Array.from({ length: Math.min(n, 50_000) }, (_, i) => [`k${i}`, 1])),
                })
              : kind === 'array'
                ? `[${'0,'.repeat(n)}0]`
                : kind === 'whitespace'
                  ? `{"phone_number":"+14155552671"${' '.repeat(n)},"x":1}`
                  : `{"phone_number":"+14155552671","metadata":{"n":${'9'.repeat(n)}}}`;
        const tooLarge = Buffer.byteLength(payload) > BODY_LIMIT;
        return { tenant, payload, expect: tooLarge ? { status: 413, error: TOO_LARGE } : { status: 400 } };
      });
    await check('deep and huge', fc.oneof(nested, huge), 40, 15);
  });

  it('exactly 32 KiB is accepted and one byte more is 413 (whitespace padding keeps the JSON valid)', async () => {
    const tenant = agencies[1]!;
    const body = JSON.stringify({ phone_number: '+14155552671', name: 'edge' });
    const pad = (size: number) => `${body.slice(0, -1)}${' '.repeat(size - body.length)}}`;
    await runBatch('body size edge', [
      { tenant, payload: pad(BODY_LIMIT), expect: { status: 200 } },
      { tenant, payload: pad(BODY_LIMIT + 1), expect: { status: 413, error: TOO_LARGE } },
    ]);
  });

  it('odd but well-formed Unicode in every string: accepted and stored unchanged where free text is allowed, the field named otherwise', async () => {
    const position = fc.constantFrom(
      'name',
      'metadata key',
      'metadata value',
      'phone_number',
      'email',
      'agent_id',
      'unknown field',
      'idempotency-key',
      'authorization',
    );
    const request = fc
      .tuple(tenantWithValidBody(), position, wellFormed, fc.uuid())
      .map(([{ tenant, body }, where, s, crm]): Req => {
        const b: Record<string, unknown> = { ...body, metadata: { ...(body.metadata as object), crm } };
        let headers: Record<string, string> | undefined;
        let authorization: string | undefined;
        let expectation: Expectation = { status: 200 };
        switch (where) {
          case 'name':
            b.name = clip(s, 200);
            // C0 controls but tab, LF and CR, DEL and C1 controls are refused, naming the field (issue 21, point 7).
            if (/(?![\t\n\r])\p{Cc}/u.test(b.name as string))
              expectation = { status: 400, error: /^name must not contain control characters / };
            break;
          case 'metadata key':
            if (s.length >= 1 && s.length <= 40 && !PROTO_KEYS.includes(s))
              (b.metadata as Record<string, unknown>)[s] = 'v';
            break;
          case 'metadata value':
            (b.metadata as Record<string, unknown>).odd = clip(s, 500);
            break;
          case 'phone_number':
            b.phone_number = s;
            expectation = E164_PATTERN.test(s) ? {} : { status: 400, error: INVALID_PHONE };
            break;
          case 'email':
            b.email = s;
            expectation = /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s)
              ? {}
              : { status: 400, error: 'email must be a valid email address' };
            break;
          case 'agent_id':
            b.agent_id = s;
            expectation = isUuid(s) ? {} : { status: 400, error: 'agent_id must be a UUID' };
            break;
          case 'unknown field':
            if (!s || FIELDS.includes(s as (typeof FIELDS)[number]) || PROTO_KEYS.includes(s)) break;
            withOwn(b, s, 'v');
            expectation = { status: 400, error: / is not a known field$/ };
            break;
          case 'idempotency-key':
            headers = { 'idempotency-key': s };
            expectation = /^[\x21-\x7e]{1,255}$/.test(s) ? {} : { status: 400, error: IDEMPOTENCY_INVALID };
            break;
          case 'authorization':
            authorization = `Bearer ${tenant.key}${s}`;
            // Optional whitespace around the value is allowed (RFC 9110), anything else spoils the key.
            expectation = /^[ \t]*$/.test(s) ? { status: 200 } : { status: 401, error: INVALID_KEY };
            break;
        }
        return {
          tenant,
          payload: JSON.stringify(b),
          expect: expectation,
          ...(headers ? { headers } : {}),
          ...(authorization !== undefined ? { authorization } : {}),
        };
      });
    await check('well-formed odd unicode', request, 140);
  });

  it('NUL and lone surrogates where a pattern or format applies (phone_number, agent_id, email, field names, headers) are 400/401', async () => {
    const position = fc.constantFrom(
      'phone_number',
      'agent_id',
      'email',
      'unknown field',
      'idempotency-key',
      'authorization',
    );
    const request = fc.tuple(tenantWithValidBody(), position, unstorable).map(([{ tenant, body }, where, s]): Req => {
      const b = { ...body };
      const expectation: Expectation = { status: 400 };
      let headers: Record<string, string> | undefined;
      let authorization: string | undefined;
      if (where === 'phone_number') {
        expectation.error = INVALID_PHONE;
        b.phone_number = s;
      } else if (where === 'agent_id') {
        expectation.error = 'agent_id must be a UUID';
        b.agent_id = s;
      } else if (where === 'email') {
        expectation.error = 'email must be a valid email address';
        b.email = s;
      } else if (where === 'unknown field') {
        expectation.error = / is not a known field$/;
        withOwn(b, s, 1);
      } else if (where === 'idempotency-key') {
        expectation.error = IDEMPOTENCY_INVALID;
        headers = { 'idempotency-key': s };
      } else {
        expectation.status = 401;
        expectation.error = INVALID_KEY;
        authorization = `Bearer ${tenant.key}${s}`;
      }
      return {
        tenant,
        payload: JSON.stringify(b),
        expect: expectation,
        ...(headers ? { headers } : {}),
        ...(authorization !== undefined ? { authorization } : {}),
      };
    });
    await check('unstorable, validated positions', request, 80);
  });

  it('NUL and lone surrogates in free text (name, metadata keys and values) are refused, never a 500 nor silently altered', async () => {
    // Postgres stores neither U+0000 (text or jsonb) nor an unpaired surrogate (jsonb refuses the escape; text gets
    // U+FFFD). The contract allows two outcomes: 4xx, or 200 with the value stored exactly as sent.
    const position = fc.constantFrom('name', 'metadata key', 'metadata value');
    const request = fc.tuple(tenantWithValidBody(), position, unstorable).map(([{ tenant, body }, where, s]): Req => {
      const b: Record<string, unknown> = { ...body, metadata: { ...(body.metadata as object) } };
      if (where === 'name') b.name = s.slice(0, 200);
      else if (where === 'metadata key') (b.metadata as Record<string, unknown>)[s.slice(0, 40) || '\u0000'] = 'v';
      else (b.metadata as Record<string, unknown>).v = s;
      // No expectation beyond the batch's own: a 5xx fails, and so does a 200 that stored something else.
      return { tenant, payload: JSON.stringify(b) };
    });
    await check('unstorable, free text', request, 60);
  });

  it('prototype keys (__proto__, constructor, prototype; plain or \\u-escaped) at the top, in metadata and nested: refused or stored as data, never merged', async () => {
    const key = fc.constantFrom('__proto__', 'constructor', 'prototype');
    const encode = (k: string, escaped: boolean) =>
      escaped
        ? `"${[...k].map((c) => (c === '_' || c === 'c' || c === 'p' ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('')}"`
        : JSON.stringify(k);
    const value = fc.constantFrom(
      '"x"',
      '1',
      'null',
      'true',
      '{"polluted":true}',
      '{"prototype":{"polluted":true}}',
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      '[{"__proto__":{"polluted":true}}]',
    );
    const placement = fc.constantFrom('top', 'metadata', 'metadata nested', 'unknown field nested');
    const query = fc.constantFrom(
      '',
      '',
      '?__proto__[polluted]=1',
      '?constructor[prototype][polluted]=1',
      '?__proto__.polluted=1&prototype=1',
    );
    const request = fc
      .tuple(tenantWithValidBody(), key, fc.boolean(), value, placement, query)
      .map(([{ tenant }, k, escaped, v, where, q]): Req => {
        const member = `${encode(k, escaped)}:${v}`;
        const payload =
          where === 'top'
            ? `{"phone_number":"+14155552671",${member}}`
            : where === 'metadata'
              ? `{"phone_number":"+14155552671","metadata":{"a":1,${member}}}`
              : where === 'metadata nested'
                ? `{"phone_number":"+14155552671","metadata":{"a":{${member}}}}`
                : `{"phone_number":"+14155552671","extra":{${member}}}`;
        // Fastify's secure JSON parser refuses __proto__ anywhere, and constructor with a prototype member.
        const dangerous =
          k === '__proto__' ||
          v.includes('__proto__') ||
          (k === 'constructor' && v.includes('"prototype"')) ||
          v.includes('"constructor":{"prototype"');
        const scalar = !v.startsWith('{') && !v.startsWith('[');
        const expectation: Expectation = dangerous
          ? { status: 400, error: MALFORMED }
          : where === 'metadata' && scalar
            ? { status: 200 }
            : where === 'top'
              ? { status: 400, error: / is not a known field$/ }
              : { status: 400 };
        return { tenant, payload, url: `${TRIGGER_URL}${q}`, expect: expectation };
      });
    await check('prototype keys', request, 90);
    for (const [name, proto] of Object.entries(PROTOTYPES))
      expect(Reflect.ownKeys(proto).map(String).sort(), name).toEqual(pristine[name]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((globalThis as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('an unknown top-level field is named in the error, whatever its value', async () => {
    const name = fc
      .stringMatching(/^[a-z][a-z_]{0,15}$/)
      .filter((s) => !FIELDS.includes(s as (typeof FIELDS)[number]) && s !== 'constructor' && s !== 'prototype');
    // Values holding __proto__ or constructor keys are refused earlier, by the JSON parser (tested above).
    const value = fc.jsonValue({ maxDepth: 2 }).filter((v) => !/"(__proto__|constructor)"\s*:/.test(JSON.stringify(v)));
    const request = fc.tuple(tenantWithValidBody(), name, value).map(([{ tenant, body }, field, v]): Req => ({
      tenant,
      payload: JSON.stringify(withOwn({ ...body }, field, v)),
      expect: { status: 400, error: `${field} is not a known field` },
    }));
    await check('unknown field named', request, 40);
  });
});

describe('real sockets: header names in any case, duplicated headers, malformed HTTP', () => {
  const CRLF = '\r\n';
  const build = (headers: [string, string][], body: string, target = TRIGGER_URL) =>
    `POST ${target} HTTP/1.1${CRLF}Host: 127.0.0.1${CRLF}${headers.map(([n, v]) => `${n}: ${v}${CRLF}`).join('')}Content-Length: ${Buffer.byteLength(body)}${CRLF}Connection: close${CRLF}${CRLF}${body}`;

  async function sendRaw(
    property: string,
    items: { text: string | Buffer; tenant: Tenant; allowed: number[]; error?: string }[],
  ) {
    const before = await countRows(prismaOf(app));
    const results = await Promise.all(items.map(async (item) => ({ item, res: await rawHttp(port, item.text) })));
    const after = await countRows(prismaOf(app));
    sent += items.length;
    const stat = stats.get(property) ?? { requests: 0, ms: 0, statuses: {} };
    stats.set(property, stat);
    stat.requests += items.length;
    const problems: string[] = [];
    let accepted = 0;
    for (const { item, res } of results) {
      stat.statuses[res.status] = (stat.statuses[res.status] ?? 0) + 1;
      const what = show(item.text.toString(), 500);
      if (res.empty) {
        problems.push(`no response to ${what}`);
        continue;
      }
      const envelope = envelopeProblem(res.status, res.headers['content-type'], res.body);
      if (envelope) problems.push(`${envelope}: ${res.status} ${show(res.body, 200)} for ${what}`);
      if (!item.allowed.includes(res.status))
        problems.push(`expected ${item.allowed.join(' or ')}, got ${res.status} ${show(res.body, 200)} for ${what}`);
      if (item.error && res.status !== 200 && !res.body.includes(JSON.stringify(item.error).slice(1, -1)))
        problems.push(`expected ${item.error}, got ${res.body} for ${what}`);
      if (res.status === 200) accepted++;
    }
    const delta = rowDelta(before, after);
    if (delta.calls !== accepted || delta.call_events !== accepted || delta.webhook_deliveries !== 0)
      problems.push(`rows changed by ${show(delta)} for ${accepted} accepted`);
    if (problems.length) throw new Error(problems.slice(0, 6).join('\n'));
  }

  it('header names in random case; duplicated Authorization, Content-Type and Idempotency-Key', async () => {
    // Node keeps the first of duplicated Authorization and Content-Type headers and joins other duplicates with
    // ", ". Whatever the parser does, a second Authorization must never authenticate a request whose first did not.
    type Dup = 'none' | 'valid, invalid' | 'invalid, valid' | 'valid, valid';
    const request = fc
      .record({
        tenant: fc.nat({ max: agencies.length - 1 }),
        authName: fc.mixedCase(fc.constant('authorization')),
        scheme: fc.mixedCase(fc.constant('bearer')),
        ctName: fc.mixedCase(fc.constant('content-type')),
        media: fc.mixedCase(fc.constant('application/json')),
        charset: fc.option(fc.mixedCase(fc.constant('; charset=utf-8')), { nil: '' }),
        idemName: fc.mixedCase(fc.constant('idempotency-key')),
        dupAuth: fc.constantFrom<Dup>('none', 'none', 'valid, invalid', 'invalid, valid', 'valid, valid'),
        dupType: fc.constantFrom('none', 'none', 'json, text', 'text, json'),
        idem: fc.constantFrom('none', 'one', 'two'),
        crm: uniqueKey,
      })
      .map((r) => {
        const tenant = agencies[r.tenant]!;
        const valid = `${r.scheme} ${tenant.key}`;
        const invalid = `${r.scheme} ${keys.unknown}`;
        const json = `${r.media}${r.charset}`;
        const headers: [string, string][] = [];
        const auths =
          r.dupAuth === 'none' ? [valid] : r.dupAuth.split(', ').map((v) => (v === 'valid' ? valid : invalid));
        for (const a of auths) headers.push([r.authName, a]);
        const types =
          r.dupType === 'none' ? [json] : r.dupType.split(', ').map((v) => (v === 'json' ? json : 'text/plain'));
        for (const t of types) headers.push([r.ctName, t]);
        if (r.idem !== 'none') headers.push([r.idemName, `${r.crm}-1`]);
        if (r.idem === 'two') headers.push([r.idemName, `${r.crm}-2`]);
        let allowed: number[];
        let error: string | undefined;
        if (r.dupAuth === 'invalid, valid') [allowed, error] = [[400, 401], undefined];
        else if (r.dupType === 'text, json')
          [allowed, error] = [r.dupAuth === 'valid, invalid' ? [400, 401, 415] : [415], undefined];
        else if (r.idem === 'two')
          [allowed, error] = [
            r.dupAuth === 'valid, invalid' || r.dupType !== 'none' ? [400, 401, 415] : [400],
            undefined,
          ];
        else if (r.dupAuth === 'valid, invalid' || r.dupType === 'json, text')
          [allowed, error] = [[200, 400, 401, 415], undefined];
        else [allowed, error] = [[200], undefined];
        return {
          text: build(headers, JSON.stringify({ phone_number: '+14155552671', metadata: { crm: r.crm } })),
          tenant,
          allowed,
          ...(error ? { error } : {}),
        };
      });
    await assertProperty(
      fc.asyncProperty(fc.array(request, { minLength: 10, maxLength: 10 }), (items) => sendRaw('raw sockets', items)),
      40,
    );
  });

  it('malformed HTTP gets the JSON envelope, never a dropped connection or a 5xx', async () => {
    const t = agencies[2]!;
    const auth: [string, string] = ['Authorization', `Bearer ${t.key}`];
    const json: [string, string] = ['Content-Type', 'application/json'];
    const body = '{"phone_number":"+14155552671"}';
    const head = (lines: string[]) => `${lines.join(CRLF)}${CRLF}${CRLF}`;
    const cases: { text: string | Buffer; tenant: Tenant; allowed: number[]; error?: string }[] = [
      {
        text:
          head([
            `POST ${TRIGGER_URL} HTTP/1.1`,
            'Host: x',
            `Authorization: Bearer ${t.key}`,
            'Content-Type: application/json',
            'Content-Length: 31',
            'Content-Length: 5',
            'Connection: close',
          ]) + body,
        tenant: t,
        allowed: [400],
      },
      {
        text:
          head([
            `POST ${TRIGGER_URL} HTTP/1.1`,
            'Host: x',
            `Authorization: Bearer ${t.key}`,
            'Content-Type: application/json',
            'Content-Length: 31',
            'Transfer-Encoding: chunked',
            'Connection: close',
          ]) + `1f${CRLF}${body}${CRLF}0${CRLF}${CRLF}`,
        tenant: t,
        allowed: [400],
      },
      {
        text:
          head([
            `POST ${TRIGGER_URL} HTTP/1.1`,
            'Host: x',
            `Authorization: Bearer ${t.key}`,
            'Content-Type: application/json',
            'Content-Length: -1',
            'Connection: close',
          ]) + body,
        tenant: t,
        allowed: [400],
      },
      {
        text:
          head([
            `POST ${TRIGGER_URL} HTTP/1.1`,
            'Host: x',
            `Authorization: Bearer ${t.key}`,
            'Content-Type: application/json',
            'Transfer-Encoding: chunked',
            'Connection: close',
          ]) + `zz${CRLF}${body}${CRLF}0${CRLF}${CRLF}`,
        tenant: t,
        allowed: [400],
      },
      {
        text:
          head([
            `POST ${TRIGGER_URL} HTTP/1.1`,
            'Host: x',
            `Authorization: Bearer ${t.key}`,
            'Content-Type: application/json',
            'Transfer-Encoding: chunked',
            'Connection: close',
          ]) + `1f${CRLF}${body}${CRLF}0${CRLF}${CRLF}`,
        tenant: t,
        allowed: [200],
      },
      {
        text: Buffer.concat([
          Buffer.from(`POST ${TRIGGER_URL} HTTP/1.1${CRLF}Host: x${CRLF}X-Evil: a`),
          Buffer.from([0]),
          Buffer.from(`b${CRLF}Connection: close${CRLF}${CRLF}`),
        ]),
        tenant: t,
        allowed: [400],
      },
      {
        text: head([`POST ${TRIGGER_URL} HTTP/1.1`, 'Host: x', 'Content Type: application/json', 'Connection: close']),
        tenant: t,
        allowed: [400],
      },
      {
        text: head([
          `POST ${TRIGGER_URL} HTTP/1.1`,
          'Host: x',
          `Authorization: Bearer`,
          ` ${t.key}`,
          'Connection: close',
        ]),
        tenant: t,
        allowed: [400],
      },
      {
        text: head([`POST ${TRIGGER_URL} HTTP/1.1`, 'Host: x', `X-Big: ${'a'.repeat(20_000)}`, 'Connection: close']),
        tenant: t,
        allowed: [400, 431],
      },
      { text: head(['GARBAGE']), tenant: t, allowed: [400] },
      { text: head([`PO ST ${TRIGGER_URL} HTTP/1.1`, 'Host: x', 'Connection: close']), tenant: t, allowed: [400] },
      { text: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', tenant: t, allowed: [400, 505] },
      { text: head([`POST ${TRIGGER_URL} HTTP/9.9`, 'Host: x', 'Connection: close']), tenant: t, allowed: [400, 505] },
      {
        text: head([`POST ${TRIGGER_URL}\u00ff HTTP/1.1`, 'Host: x', 'Connection: close']),
        tenant: t,
        allowed: [400, 404],
      },
      { text: build([auth, json], body, `http://evil.example${TRIGGER_URL}`), tenant: t, allowed: [200, 400, 404] },
      { text: build([auth, json], body, `${TRIGGER_URL}/`), tenant: t, allowed: [404] },
      { text: build([auth, json], body, `//api/v1/calls/trigger`), tenant: t, allowed: [404] },
      { text: build([auth, json], body, `/api/v1/calls/../calls/trigger`), tenant: t, allowed: [200, 400, 404] },
      { text: build([auth, json], body, `${TRIGGER_URL}%00`), tenant: t, allowed: [400, 404] },
      {
        text: build([auth, json], body, `${TRIGGER_URL}?${'a=1&'.repeat(1_500)}`),
        tenant: t,
        allowed: [200, 400, 414, 431],
      },
      { text: build([auth, json], body, `/${'x'.repeat(8_000)}`), tenant: t, allowed: [400, 404, 414, 431] },
      {
        text: build([auth, ['Content-Type', 'application/json'], ['Content-Type', 'text/plain']], body),
        tenant: t,
        allowed: [200, 415],
      },
      {
        text: `POST ${TRIGGER_URL} HTTP/1.1\nHost: x\nAuthorization: Bearer ${t.key}\nContent-Type: application/json\nContent-Length: 31\nConnection: close\n\n${body}`,
        tenant: t,
        allowed: [200, 400],
      },
      {
        text:
          head([
            `POST ${TRIGGER_URL} HTTP/1.1`,
            'Host: x',
            `Authorization: Bearer ${t.key}`,
            'Content-Type: application/json',
            'Content-Length: 10',
            'Connection: close',
          ]) + body,
        tenant: t,
        allowed: [400],
      },
    ];
    await sendRaw('malformed http', cases);
  });

  it('an Expect header other than 100-continue is answered with the envelope too', async () => {
    // Node answers an unknown expectation itself (417, empty body) unless the server listens for 'checkExpectation'.
    const t = agencies[2]!;
    await sendRaw('malformed http', [
      {
        text: build(
          [
            ['Authorization', `Bearer ${t.key}`],
            ['Content-Type', 'application/json'],
            ['Expect', 'something-odd'],
          ],
          '{"phone_number":"+14155552671"}',
        ),
        tenant: t,
        allowed: [200, 417],
      },
    ]);
  });
});

describe('after everything', () => {
  it('sent at least 20,000 generated requests', () => {
    expect(sent).toBeGreaterThanOrEqual(20_000);
  });

  it('left Object.prototype and the other built-in prototypes exactly as they were', () => {
    for (const [name, proto] of Object.entries(PROTOTYPES))
      expect(Reflect.ownKeys(proto).map(String).sort(), name).toEqual(pristine[name]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });
});
