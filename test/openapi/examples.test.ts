// The webhook events' examples cannot lie: each one in the OpenAPI document and in the published JSON Schemas is valid
// against the schema it illustrates, has the payload's fields in the payload's order, and shows what issue 23 asks
// of them (a retried call's second call.started, a completion, a voicemail failure, a schedule and the callee's zone,
// and a call that ended before its first dial: attempt 0); docs/webhooks.md shows the same payloads.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { CallData } from '../../schemas/call.js';
import { CallCompletedEvent, CallFailedEvent, CallStartedEvent } from '../../schemas/webhook.js';
import {
  CALL_COMPLETED_EXAMPLE,
  CALL_FAILED_BEFORE_DIAL_EXAMPLE,
  CALL_FAILED_EXAMPLE,
  CALL_STARTED_EXAMPLE,
} from '../../schemas/webhook-examples.js';
import { generateContract } from '../../src/openapi/generate.js';
import { PROJECT_ROOT } from '../../src/paths.js';

interface Doc {
  components: { schemas: Record<string, { examples?: unknown[] }> };
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>;
}

type Validator = ((value: unknown) => boolean) & { errors?: unknown };

let doc: Doc;
let files: Map<string, string>;
const ajv2020 = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
(addFormats as unknown as typeof addFormats.default)(ajv2020);
const ajv07 = new (Ajv as unknown as typeof Ajv.default)({ strict: false, allErrors: true });
(addFormats as unknown as typeof addFormats.default)(ajv07);

beforeAll(async () => {
  files = await generateContract();
  doc = JSON.parse(files.get('openapi/openapi.json')!) as Doc;
  ajv2020.addSchema({ $id: 'doc', components: doc.components }, 'doc');
});

/** How many examples each event's schema carries: call.failed has one after dialling and one before any dial. */
const EXAMPLES: Record<string, number> = { 'call.started': 1, 'call.completed': 1, 'call.failed': 2 };

/** Each webhook's event schema in the document, by event type, and a validator for it. */
function documented(): [string, { examples?: unknown[] }, Validator][] {
  return Object.entries(doc.webhooks).map(([type, hook]) => {
    const ref = hook.post.requestBody.content['application/json']!.schema.$ref;
    const schema = doc.components.schemas[ref.replace('#/components/schemas/', '')]!;
    return [type, schema, ajv2020.compile({ $ref: `doc${ref}` }) as Validator];
  });
}

describe("the webhook events' examples", () => {
  it('in the OpenAPI document: every event has its examples, valid against its schema, of its own type', () => {
    const seen: string[] = [];
    for (const [type, schema, validate] of documented()) {
      expect(schema.examples, type).toHaveLength(EXAMPLES[type]!);
      for (const example of schema.examples!) {
        expect(validate(example), `${type}: ${JSON.stringify(validate.errors)}`).toBe(true);
        expect((example as { type: string }).type).toBe(type);
        seen.push(type);
      }
    }
    expect(seen.sort()).toEqual(['call.completed', 'call.failed', 'call.failed', 'call.started']);
  });

  it('the validation can fail: a wrong field, a missing one or an unknown one is refused', () => {
    const [, schema, validate] = documented().find(([type]) => type === 'call.failed')!;
    const example = schema.examples![0] as { data: Record<string, unknown> };
    const broken = (change: (data: Record<string, unknown>) => void) => {
      const copy = structuredClone(example);
      change(copy.data);
      return validate(copy);
    };
    expect(broken(() => {})).toBe(true);
    expect(broken((d) => (d.voicemail_left = 'yes'))).toBe(false);
    expect(broken((d) => (d.failure_reason = 'machine'))).toBe(false);
    expect(broken((d) => delete d.timezone_source)).toBe(false);
    expect(broken((d) => (d.retries = 1))).toBe(false);
    expect(broken((d) => (d.scheduled_at = '2054-12-01 09:30'))).toBe(false);
  });

  it('in the published JSON Schemas (openapi/schemas/): each is valid against the file that carries it', () => {
    for (const [name, count] of [
      ['CallStartedEvent', 1],
      ['CallCompletedEvent', 1],
      ['CallFailedEvent', 2],
    ] as const) {
      const schema = JSON.parse(files.get(`openapi/schemas/${name}.json`)!) as { examples?: unknown[] };
      expect(schema.examples, name).toHaveLength(count);
      const validate = ajv07.compile(schema) as Validator;
      for (const example of schema.examples!)
        expect(validate(example), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("are the TypeBox schemas' own, each passing its schema's check", () => {
    for (const [schema, examples] of [
      [CallStartedEvent, [CALL_STARTED_EXAMPLE]],
      [CallCompletedEvent, [CALL_COMPLETED_EXAMPLE]],
      [CallFailedEvent, [CALL_FAILED_EXAMPLE, CALL_FAILED_BEFORE_DIAL_EXAMPLE]],
    ] as const) {
      expect(schema.examples).toEqual(examples);
      for (const example of examples)
        expect([...Value.Errors(schema, example)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
    }
  });

  it("carry the payload's fields in the payload's order (a delivery's data follows CallData)", () => {
    for (const example of [
      CALL_STARTED_EXAMPLE,
      CALL_COMPLETED_EXAMPLE,
      CALL_FAILED_EXAMPLE,
      CALL_FAILED_BEFORE_DIAL_EXAMPLE,
    ]) {
      expect(Object.keys(example), example.type).toEqual(['type', 'timestamp', 'data']);
      expect(Object.keys(example.data), example.type).toEqual(Object.keys(CallData.properties));
      for (const outcome of example.data.attempt_outcomes)
        expect(Object.keys(outcome)).toEqual(['attempt', 'outcome', 'at']);
    }
  });

  it('show a retried call, a schedule, the callee’s zone and a voicemail, each consistent in itself', () => {
    const started = CALL_STARTED_EXAMPLE.data;
    expect(started).toMatchObject({ status: 'dialing', attempt: 2, attempts: 2, answered_at: null, ended_at: null });
    expect(started.attempt_outcomes.map((o) => o.outcome)).toEqual(['busy']);
    expect(CALL_STARTED_EXAMPLE.timestamp).toBe(started.started_at);

    const completed = CALL_COMPLETED_EXAMPLE.data;
    expect(completed.call_id).toBe(started.call_id);
    expect(completed).toMatchObject({ status: 'completed', failure_reason: null, attempt: 2, attempts: 2 });
    expect(completed.attempt_outcomes.map((o) => o.outcome)).toEqual(['busy', 'completed']);
    expect(completed.attempt_outcomes[0]).toEqual(started.attempt_outcomes[0]);
    expect(completed.started_at).toBe(started.started_at);

    const failed = CALL_FAILED_EXAMPLE.data;
    expect(failed).toMatchObject({
      status: 'failed',
      failure_reason: 'voicemail',
      voicemail_left: true,
      answered_by: 'machine',
      attempts: 2,
    });
    expect(failed.attempt_outcomes.map((o) => o.outcome)).toEqual(['voicemail', 'voicemail']);

    for (const { timestamp, data } of [CALL_COMPLETED_EXAMPLE, CALL_FAILED_EXAMPLE]) {
      // The terminal event is sent when the last attempt ends; duration is answered to ended, rounded to seconds.
      expect(timestamp).toBe(data.ended_at);
      expect(data.attempt_outcomes.at(-1)!.at).toBe(data.ended_at);
      expect(data.duration_seconds).toBe(
        Math.round((Date.parse(data.ended_at!) - Date.parse(data.answered_at!)) / 1000),
      );
    }
    // Scheduled (09:30 in New York is 14:30 UTC in December), in the zone the trigger gave; and a zone from the
    // number's country (+44: the United Kingdom, one zone).
    expect(started.scheduled_at).toMatch(/^\d{4}-12-\d{2}T14:30:00\.000Z$/);
    expect(started).toMatchObject({
      timezone: 'America/New_York',
      timezone_source: 'request',
    });
    expect(failed).toMatchObject({ scheduled_at: null, timezone: 'Europe/London', timezone_source: 'country' });
    expect(failed.phone_number.startsWith('+44')).toBe(true);

    // Ended before its first dial: no attempt made, no times but its creation and its end.
    const undialled = CALL_FAILED_BEFORE_DIAL_EXAMPLE.data;
    expect(undialled).toMatchObject({
      status: 'failed',
      failure_reason: 'canceled',
      attempt: 0,
      attempts: 0,
      attempt_outcomes: [],
      started_at: null,
      answered_at: null,
      duration_seconds: null,
      answered_by: null,
    });
    expect(CALL_FAILED_BEFORE_DIAL_EXAMPLE.timestamp).toBe(undialled.ended_at);
  });

  it('docs/webhooks.md shows the scheduled call’s call.started and both call.failed examples as they are here', async () => {
    const markdown = await fs.readFile(path.join(PROJECT_ROOT, 'docs/webhooks.md'), 'utf8');
    const blocks = [...markdown.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as unknown);
    expect(blocks).toContainEqual(CALL_STARTED_EXAMPLE);
    expect(blocks).toContainEqual(CALL_FAILED_EXAMPLE);
    expect(blocks).toContainEqual(CALL_FAILED_BEFORE_DIAL_EXAMPLE);
  });
});
