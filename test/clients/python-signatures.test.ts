// The Python client agrees with the JavaScript side: deliveries signed with the `standardwebhooks` npm package are
// accepted or refused by its verify_webhook exactly as by that package (tampered, stale, future, wrong secret, other
// versions refused; any matching signature of several accepted), and its types and error table equal the committed
// OpenAPI document and schemas/error-codes.ts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../schemas/error-codes.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { requirePythonPackages, ROOT, runPython } from './python-run.js';

interface Vector {
  name: string;
  body: string;
  headers: Record<string, string>;
  secret: string;
  expected: boolean;
}

beforeAll(async () => {
  await requirePythonPackages();
});

/** Deliveries signed by the JavaScript library at several times and with several secrets, with the verdict due. */
function vectors(): Vector[] {
  const secret = generateWebhookSecret();
  const other = generateWebhookSecret();
  const now = Date.now();
  const event = (name: string) =>
    JSON.stringify({ type: 'call.completed', timestamp: new Date(now).toISOString(), data: { call_id: 'c-1', name } });
  const signed = (id: string, body: string, atMs: number, key = secret) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(atMs / 1000)),
    'webhook-signature': new Webhook(key).sign(id, new Date(atMs), body),
  });
  const plain = event('Ada Lovelace');
  const unicode = event('Zoë Ørsted 😀 \u2028 "quoted"');
  const both = signed('msg_5', plain, now);
  const rotated = signed('msg_5', plain, now, other)['webhook-signature'];
  return [
    { name: 'signed now', body: plain, headers: signed('msg_1', plain, now), secret, expected: true },
    { name: 'unicode body', body: unicode, headers: signed('msg_2', unicode, now), secret, expected: true },
    { name: '200 s old', body: plain, headers: signed('msg_3', plain, now - 200_000), secret, expected: true },
    { name: '200 s ahead', body: plain, headers: signed('msg_4', plain, now + 200_000), secret, expected: true },
    {
      name: 'several signatures, one matching',
      body: plain,
      headers: { ...both, 'webhook-signature': `${rotated} v2,abc ${both['webhook-signature']}` },
      secret,
      expected: true,
    },
    {
      name: 'secret without its prefix',
      body: plain,
      headers: signed('msg_6', plain, now),
      secret: secret.slice('whsec_'.length),
      expected: true,
    },
    {
      name: 'tampered body',
      body: plain.replace('Ada', 'Eve'),
      headers: signed('msg_7', plain, now),
      secret,
      expected: false,
    },
    { name: 'wrong secret', body: plain, headers: signed('msg_8', plain, now, other), secret, expected: false },
    { name: 'stale (400 s)', body: plain, headers: signed('msg_9', plain, now - 400_000), secret, expected: false },
    { name: 'future (400 s)', body: plain, headers: signed('msg_10', plain, now + 400_000), secret, expected: false },
    {
      name: 'another id',
      body: plain,
      headers: { ...signed('msg_11', plain, now), 'webhook-id': 'msg_12' },
      secret,
      expected: false,
    },
    {
      name: 'only another version',
      body: plain,
      headers: { ...both, 'webhook-signature': both['webhook-signature'].replace(/^v1,/, 'v2,') },
      secret,
      expected: false,
    },
  ];
}

function javascriptVerdict(vector: Vector): boolean {
  try {
    new Webhook(vector.secret).verify(vector.body, vector.headers);
    return true;
  } catch {
    return false;
  }
}

describe('Python webhook verification against the standardwebhooks package', () => {
  it('gives every delivery the verdict the JavaScript library gives', async () => {
    const cases = vectors();
    const run = await runPython([path.join(ROOT, 'clients/python/tests/verify_vectors.py')], {
      input: JSON.stringify(cases),
    });
    expect(run.code, run.stderr).toBe(0);
    const verdicts = JSON.parse(run.stdout) as { ok: boolean; error: string | null }[];
    const table = (pick: (v: Vector, i: number) => boolean) =>
      Object.fromEntries(cases.map((v, i) => [v.name, pick(v, i)]));
    expect(table((v) => javascriptVerdict(v))).toEqual(table((v) => v.expected));
    expect(table((_, i) => verdicts[i]!.ok)).toEqual(table((v) => v.expected));
    expect(verdicts.find((_, i) => cases[i]!.name === 'stale (400 s)')!.error).toMatch(/too old/);
    expect(verdicts.find((_, i) => cases[i]!.name === 'future (400 s)')!.error).toMatch(/future/);
  });
});

/** The Python package's shapes: each TypedDict's keys, its required keys, the vocabularies and the error table. */
const DESCRIBE = `
import json, typing
import outbound_call_trigger as o
from outbound_call_trigger import types as t
dicts = {n: getattr(t, n) for n in ["TriggerRequest", "TriggerResponse", "CallData", "CallResult", "AttemptOutcome",
                                     "TranscriptEntry", "WebhookEvent"]}
print(json.dumps({
  "keys": {n: sorted(d.__annotations__) for n, d in dicts.items()},
  "required": {n: sorted(d.__required_keys__) for n, d in dicts.items()},
  "vocabularies": {n: sorted(typing.get_args(getattr(t, n))) for n in ["CallStatus", "FailureReason",
                   "AttemptOutcomeName", "AnsweredBy", "TimezoneSource", "EventType"]},
  "errors": {code: [status, message] for code, (status, message) in o.ERRORS.items()},
}))
`;

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  enum?: string[];
}

describe('the Python package mirrors the contract', () => {
  let described: {
    keys: Record<string, string[]>;
    required: Record<string, string[]>;
    vocabularies: Record<string, string[]>;
    errors: Record<string, [number, string]>;
  };
  let schemas: Record<string, JsonSchema>;
  let webhooks: string[];

  beforeAll(async () => {
    const run = await runPython(['-c', DESCRIBE]);
    expect(run.code, run.stderr).toBe(0);
    described = JSON.parse(run.stdout) as typeof described;
    const document = JSON.parse(await fs.readFile(path.join(ROOT, 'openapi/openapi.json'), 'utf8')) as {
      components: { schemas: Record<string, JsonSchema> };
      webhooks: Record<string, unknown>;
    };
    schemas = document.components.schemas;
    webhooks = Object.keys(document.webhooks);
  });

  const object = (schema: JsonSchema) => schema.anyOf?.find((s) => s.properties) ?? schema;
  const enums = (schema: JsonSchema) =>
    (schema.anyOf ?? [schema]).flatMap((s) => s.enum ?? []).sort((a, b) => (a < b ? -1 : 1));

  it('has the fields and required fields of each OpenAPI schema', () => {
    const data = schemas.CallData!;
    const expected: Record<string, JsonSchema> = {
      TriggerRequest: schemas.TriggerRequest!,
      TriggerResponse: schemas.TriggerResponse!,
      CallData: data,
      CallResult: object(data.properties!.result!),
      AttemptOutcome: data.properties!.attempt_outcomes!.items!,
      TranscriptEntry: object(data.properties!.result!).properties!.transcript!.anyOf!.find((s) => s.items)!.items!,
      WebhookEvent: schemas.Event_call_completed!,
    };
    for (const [name, schema] of Object.entries(expected)) {
      expect(described.keys[name], name).toEqual(Object.keys(schema.properties!).sort());
      expect(described.required[name], name).toEqual([...(schema.required ?? [])].sort());
    }
  });

  it('has the vocabularies of CallData and the event types', () => {
    const data = schemas.CallData!.properties!;
    expect(described.vocabularies).toEqual({
      CallStatus: enums(data.status!),
      FailureReason: enums(data.failure_reason!),
      AttemptOutcomeName: enums(data.attempt_outcomes!.items!.properties!.outcome!),
      AnsweredBy: enums(data.answered_by!),
      TimezoneSource: enums(data.timezone_source!),
      EventType: [...webhooks].sort(),
    });
  });

  it("has the server's error table, code for code", () => {
    expect(described.errors).toEqual(
      Object.fromEntries(Object.entries(ERRORS).map(([code, { status, message }]) => [code, [status, message]])),
    );
  });
});
