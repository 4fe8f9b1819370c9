// The documentation's TypeScript examples run: the integrating client of docs/api.md against the real app on a local
// port, and the webhook verification snippet of docs/webhooks.md against a real signed delivery; the event examples
// of docs/webhooks.md are checked against the payload schema.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import type { App } from '../../src/app.js';
import { CallData } from '../../schemas/call.js';
import { WebhookEvent } from '../../schemas/webhook.js';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';

const generated: string[] = [];

/**
 * The first ts block after `heading` in the markdown file `doc`, written to a module the test can import (beside the
 * test, so that it resolves the project's packages; removed afterwards, so that the linter never finds it).
 */
async function snippet(doc: string, heading: string, file: string): Promise<string> {
  const markdown = await fs.readFile(path.resolve(doc), 'utf8');
  const at = markdown.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`no heading ${heading} in ${doc}`);
  const code = /```ts\n([\s\S]*?)```/.exec(markdown.slice(at))?.[1];
  if (!code) throw new Error(`no ts block after ${heading} in ${doc}`);
  const target = path.resolve('test/readme', `.generated-${file}.ts`);
  await fs.writeFile(target, code);
  generated.push(target);
  return target;
}

let app: App;
let tenant: Tenant;
let baseUrl: string;

beforeAll(async () => {
  ({ app } = await buildTestApp());
  tenant = await createTenant(app.storage);
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await Promise.all(generated.map((file) => fs.rm(file, { force: true })));
});

describe('documentation snippets', () => {
  it('Integrating: triggers a call, and throws on a refusal without retrying', async () => {
    const { triggerCall } = (await import(await snippet('docs/api.md', '## Integrating', 'integrating'))) as {
      triggerCall: (b: string, k: string, body: object) => Promise<string>;
    };
    const callId = await triggerCall(baseUrl, tenant.key, {
      phone_number: '+14155552671',
      metadata: { crm_id: 'L-1' },
    });
    expect(await prismaOf(app).call.count({ where: { id: callId } })).toBe(1);
    await expect(triggerCall(baseUrl, tenant.key, { phone_number: '555' })).rejects.toThrow(
      /refused \(400\): Invalid phone number format/,
    );
  });

  it('Verifying a delivery: accepts a real signature and rejects a tampered body', async () => {
    const secret = generateWebhookSecret();
    process.env.WEBHOOK_SECRET = secret;
    const { verify } = (await import(await snippet('docs/webhooks.md', '## Verifying a delivery', 'verify'))) as {
      verify: (body: string, headers: Record<string, string>) => { type: string };
    };
    const body = JSON.stringify({
      type: 'call.completed',
      timestamp: new Date().toISOString(),
      data: { call_id: 'x', status: 'completed', metadata: {} },
    });
    const now = new Date();
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': WebhookSender.sign(secret, 'msg_1', new Date(Math.floor(now.getTime() / 1000) * 1000), body),
    };
    expect(verify(body, headers).type).toBe('call.completed');
    expect(() => verify(body.replace('completed', 'failed'), headers)).toThrow();
  });

  it('Events: every JSON example of docs/webhooks.md is an event as the payload schema states it', async () => {
    const markdown = await fs.readFile(path.resolve('docs/webhooks.md'), 'utf8');
    const examples = [...markdown.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as unknown);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) expect([...Value.Errors(WebhookEvent, example)].map((e) => e.path)).toEqual([]);
    // And the table of data's fields names every field the schema has.
    for (const field of Object.keys(CallData.properties)) expect(markdown).toContain(`"${field}"`);
  });
});
