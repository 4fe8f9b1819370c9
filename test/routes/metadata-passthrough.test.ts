// metadata passes through unchanged (issue 12, item 7): the order of its keys as written, integer-like keys included,
// in the call record and in every webhook event; a repeated key is refused, since only its last value was validated.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { objectEntries } from '../../src/domain/raw-json.js';
import type { Tenant } from '../helpers/fixtures.js';
import { json, type WebhookEvent } from '../helpers/json.js';
import type { Receiver } from '../helpers/receiver.js';
import { buildWebhookApp } from '../helpers/webhook-app.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { prismaOf } from '../helpers/app.js';

let app: App;
let tenant: Tenant;
let receiver: Receiver;

// The example (jsonb gave back vip, note, score, crm_id), then keys a JavaScript object would move first.
const METADATA = '{"crm_id":"L-42","score":9.5,"vip":true,"note":null,"10":"ten","2":"two","x":"\\u00e9 \\"q\\""}';
const WRITTEN_KEYS = ['crm_id', 'score', 'vip', 'note', '10', '2', 'x'];

beforeAll(async () => {
  ({ app, tenant, receiver } = await buildWebhookApp(40));
});

/** The text of `data.metadata` in a webhook body, as written on the wire. */
function metadataOnTheWire(body: string): string {
  const data = objectEntries(body).find(([key]) => key === 'data')![1];
  return objectEntries(data).find(([key]) => key === 'metadata')![1];
}

describe('metadata', () => {
  it('keeps its key order, integer-like keys included, in the call record and in every webhook event', async () => {
    const body = `{ "phone_number": "+14155552671",\n  "metadata": ${METADATA.replace(/,"/g, ', "')} }`;
    const response = await trigger(app, tenant.key, body);
    expect(response.statusCode, response.body).toBe(200);
    const callId = callIdOf(response);

    const [stored] = await prismaOf(app).$queryRaw<
      { metadata: string }[]
    >`SELECT metadata::text AS metadata FROM calls WHERE id = ${callId}::uuid`;
    expect(stored!.metadata).toBe(METADATA);

    const deadline = Date.now() + 10_000;
    const mine = () => receiver.received.filter((r) => r.body.includes(callId));
    while (mine().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(mine()).toHaveLength(2);
    for (const { body: sent } of mine()) {
      expect(metadataOnTheWire(sent)).toBe(METADATA);
      expect(objectEntries(metadataOnTheWire(sent)).map(([key]) => key)).toEqual(WRITTEN_KEYS);
      expect(json<WebhookEvent>(sent).data.metadata).toEqual(json<unknown>(METADATA));
    }
  });

  it('without metadata, events carry {}', async () => {
    const response = await trigger(app, tenant.key, { phone_number: '+14155552671' });
    const [stored] = await prismaOf(app).$queryRaw<
      { metadata: string }[]
    >`SELECT metadata::text AS metadata FROM calls WHERE id = ${callIdOf(response)}::uuid`;
    expect(stored!.metadata).toBe('{}');
  });

  it('a repeated key is refused (only its last value was checked) and nothing is stored', async () => {
    const before = await prismaOf(app).call.count();
    const response = await trigger(
      app,
      tenant.key,
      `{"phone_number":"+14155552671","metadata":{"a":"${'x'.repeat(600)}","a":"short"}}`,
    );
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ success: false, error: 'metadata must not repeat a key' });
    expect(await prismaOf(app).call.count()).toBe(before);
  });
});
