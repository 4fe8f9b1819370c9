// The n8n community node (integrations/n8n, issue 49.3): its action "Trigger a call" and its credential's test, run
// from the package's build against the real server listening on a free port, through a stand-in for n8n's runtime
// (test/integrations/n8n-runtime.ts) whose HTTP helper performs the requests with fetch; and the package's contents.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, keyWithTypo, updateAgentSettings, type Tenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { forceAgent } from '../helpers/seed/accounts.js';
import {
  executeContext,
  loadBuilt,
  n8nErrors,
  PACKAGE_DIR,
  testCredential,
  type ActionNode,
  type ApiCredential,
} from './n8n-runtime.js';

const { OutboundCall } = loadBuilt<{ OutboundCall: new () => ActionNode }>('nodes/OutboundCall/OutboundCall.node.js');
const { OutboundCallTriggerApi } = loadBuilt<{ OutboundCallTriggerApi: new () => ApiCredential }>(
  'credentials/OutboundCallTriggerApi.credentials.js',
);
const { NodeApiError, NodeOperationError } = n8nErrors();

const START = new Date('2055-03-01T12:00:00Z').getTime();
const began = Date.now();
let app: App;
let tenant: Tenant;
let baseUrl: string;

beforeAll(async () => {
  // The app's clock runs from 2055 (scheduled_at is read against it), at the real pace.
  ({ app } = await buildTestApp({ clock: () => new Date(START + (Date.now() - began)) }));
  tenant = await createTenant(app.storage);
  // Its agent reads windows in the callee's zone, so the call keeps the recipient_timezone it was given.
  await forceAgent(prismaOf(app), tenant.agentId, { windowTimezone: 'recipient' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the app is not listening on a port');
  baseUrl = `http://127.0.0.1:${address.port}/`;
});

const callCount = () => prismaOf(app).call.count();

/** Runs the action once over `parameters` (one entry per item) as execution `executionId`. */
async function run(parameters: Record<string, unknown>[], executionId: string, extra: { key?: string } = {}) {
  const { context, requests } = executeContext({
    credentialType: new OutboundCallTriggerApi(),
    credentials: { baseUrl, apiKey: extra.key ?? tenant.key },
    parameters,
    executionId,
  });
  const [items] = await new OutboundCall().execute.call(context);
  return { items: items!, requests };
}

/** TriggerRequest.json's fields, a nested object's as "consent.type": the node sends each, a field added later too. */
const SCHEMA = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '../../openapi/schemas/TriggerRequest.json'), 'utf8'),
) as { properties: Record<string, { properties?: object }> };
const SCHEMA_FIELDS = Object.entries(SCHEMA.properties).flatMap(([name, field]) => [
  name,
  ...Object.keys(field.properties ?? {}).map((sub) => `${name}.${sub}`),
]);
const valueAt = (body: unknown, field: string): unknown =>
  field.split('.').reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], body);

const REQUIRED_CONSENT = {
  type: 'express_written',
  obtained_at: '2055-02-20T09:30:00-05:00',
  source: 'Web form, example.com/quote',
};
const CONSENT = { ...REQUIRED_CONSENT, evidence_url: 'https://example.com/consents/L-42.pdf' };
const consentField = {
  record: {
    type: CONSENT.type,
    obtainedAt: CONSENT.obtained_at,
    source: CONSENT.source,
    evidenceUrl: CONSENT.evidence_url,
  },
};

const everyField = {
  operation: 'trigger',
  phoneNumber: '+12125550143',
  additionalFields: {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    metadata: '{"crm_id": "L-42", "score": 9.5, "vip": true, "note": null}',
    scheduledAt: '2055-03-02T09:30:00-05:00',
    recipientTimezone: 'America/New_York',
    recipientRegion: 'us-ny',
    consent: consentField,
  },
};

describe('n8n action "Trigger a call"', () => {
  it("sends every field; the call is stored with them; the answer is the service's, with the key it sent", async () => {
    const parameters = { ...everyField, additionalFields: { ...everyField.additionalFields, agentId: tenant.agentId } };
    const { items, requests } = await run([parameters], 'exec-1');

    expect(requests[0]!.body).toEqual({
      phone_number: '+12125550143',
      agent_id: tenant.agentId,
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      metadata: { crm_id: 'L-42', score: 9.5, vip: true, note: null },
      scheduled_at: '2055-03-02T09:30:00-05:00',
      recipient_timezone: 'America/New_York',
      recipient_region: 'us-ny',
      consent: CONSENT,
    });
    const unsent = SCHEMA_FIELDS.filter((field) => valueAt(requests[0]!.body, field) === undefined);
    expect(unsent, 'fields of TriggerRequest.json the node does not send').toEqual([]);
    expect(items).toHaveLength(1);
    expect(items[0]).toEqual({
      json: {
        success: true,
        call_id: expect.any(String) as string,
        status: 'initiated',
        idempotency_key: expect.stringMatching(/^n8n-[0-9a-f]{64}$/) as string,
        idempotent_replayed: false,
      },
      pairedItem: { item: 0 },
    });
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: items[0]!.json.call_id as string } });
    expect(call).toMatchObject({
      accountId: tenant.accountId,
      agentId: tenant.agentId,
      phoneNumber: '+12125550143',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      metadata: { crm_id: 'L-42', score: 9.5, vip: true, note: null },
      scheduledAt: new Date('2055-03-02T14:30:00Z'),
      timezone: 'America/New_York',
      timezoneSource: 'request',
      recipientRegion: 'US-NY',
      consent: CONSENT,
    });
    expect(requests[0]!.headers).toEqual({ 'Idempotency-Key': items[0]!.json.idempotency_key });
  });

  it('a consent-required agent: 400 without Consent, nothing stored; with it (no evidence URL) it calls', async () => {
    const strict = await createTenant(app.storage, { name: 'Consent Agency' });
    await updateAgentSettings(app.storage, strict.agentId, { consentRequired: 'on' });
    const before = await callCount();
    const bare = { ...everyField, additionalFields: {} };
    await expect(run([bare], 'exec-13', { key: strict.key })).rejects.toMatchObject({
      message: 'Consent is required for this agent',
      httpCode: '400',
    });
    expect(await callCount()).toBe(before);

    // Evidence URL left empty is not sent (the server would refuse "" as a URL).
    const consent = { record: { ...consentField.record, evidenceUrl: '' } };
    const { items } = await run([{ ...bare, additionalFields: { consent } }], 'exec-14', { key: strict.key });
    expect(items[0]!.json).toMatchObject({ success: true, status: 'initiated' });
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: items[0]!.json.call_id as string } });
    expect([call.agentId, call.consent]).toEqual([strict.agentId, REQUIRED_CONSENT]);
  });

  it('a re-run of the same execution (Retry On Fail) gets the same call back; another execution calls again', async () => {
    const before = await callCount();
    const first = await run([everyField, { ...everyField, phoneNumber: '+12125550144' }], 'exec-2');
    const again = await run([everyField, { ...everyField, phoneNumber: '+12125550144' }], 'exec-2');
    expect(again.items.map((i) => i.json.call_id)).toEqual(first.items.map((i) => i.json.call_id));
    expect(again.items.map((i) => i.json.idempotent_replayed)).toEqual([true, true]);
    expect(new Set(first.items.map((i) => i.json.call_id)).size).toBe(2);
    expect(await callCount()).toBe(before + 2);

    const next = await run([everyField], 'exec-3');
    expect(next.items[0]!.json.call_id).not.toBe(first.items[0]!.json.call_id);
    expect(await callCount()).toBe(before + 3);
  });

  it('"From the item content" survives a new execution (n8n\'s Retry execution); Custom sends the key given', async () => {
    const byContent = { ...everyField, phoneNumber: '+12125550145', idempotencyKeyMode: 'itemContent' };
    const first = await run([byContent], 'exec-4');
    const retried = await run([byContent], 'exec-5');
    expect(retried.items[0]!.json).toMatchObject({ call_id: first.items[0]!.json.call_id, idempotent_replayed: true });

    const custom = { ...everyField, idempotencyKeyMode: 'custom', idempotencyKey: 'crm-L-42-attempt-1' };
    const { items, requests } = await run([custom], 'exec-6');
    expect(requests[0]!.headers).toEqual({ 'Idempotency-Key': 'crm-L-42-attempt-1' });
    expect(items[0]!.json.idempotency_key).toBe('crm-L-42-attempt-1');

    const none = await run([{ ...everyField, idempotencyKeyMode: 'none' }], 'exec-7');
    expect(none.requests[0]!.headers).toEqual({});
    expect(none.items[0]!.json.idempotency_key).toBeNull();
  });

  it("a 400 is a NodeApiError carrying the server's message and status; nothing is stored", async () => {
    const before = await callCount();
    const failure = run([{ ...everyField, phoneNumber: '+1415555' }], 'exec-8');
    await expect(failure).rejects.toBeInstanceOf(NodeApiError);
    await expect(failure).rejects.toMatchObject({ message: 'Invalid phone number format', httpCode: '400' });

    const zone = run([{ ...everyField, additionalFields: { recipientTimezone: '+05:00' } }], 'exec-9');
    await expect(zone).rejects.toMatchObject({
      message: 'recipient_timezone must be an IANA time zone name such as America/New_York',
      httpCode: '400',
    });
    expect(await callCount()).toBe(before);
  });

  it('a wrong key is a NodeApiError 401; metadata that is not a JSON object fails before any request', async () => {
    await expect(run([everyField], 'exec-10', { key: keyWithTypo(tenant.key) })).rejects.toMatchObject({
      message: 'Invalid API key',
      httpCode: '401',
    });
    for (const metadata of ['{"crm_id": ', '[1, 2]']) {
      const { context, requests } = executeContext({
        credentialType: new OutboundCallTriggerApi(),
        credentials: { baseUrl, apiKey: tenant.key },
        parameters: [{ ...everyField, additionalFields: { metadata } }],
        executionId: 'exec-11',
      });
      const failure = new OutboundCall().execute.call(context);
      await expect(failure).rejects.toBeInstanceOf(NodeOperationError);
      await expect(failure).rejects.toMatchObject({ message: 'Metadata must be a JSON object' });
      expect(requests).toHaveLength(0);
    }
  });

  it('Continue On Fail: the failed item carries the error, the others their calls', async () => {
    const { context } = executeContext({
      credentialType: new OutboundCallTriggerApi(),
      credentials: { baseUrl, apiKey: tenant.key },
      parameters: [{ ...everyField, phoneNumber: 'not a number' }, everyField],
      executionId: 'exec-12',
      continueOnFail: true,
    });
    const [items] = await new OutboundCall().execute.call(context);
    expect(items![0]).toEqual({ json: { error: 'Invalid phone number format' }, pairedItem: { item: 0 } });
    expect(items![1]).toMatchObject({ json: { success: true, status: 'initiated' }, pairedItem: { item: 1 } });
  });
});

describe("the credential's test", () => {
  it('passes a key that may trigger calls, without placing one', async () => {
    const before = await callCount();
    expect(await testCredential(new OutboundCallTriggerApi(), { baseUrl, apiKey: tenant.key })).toEqual({
      status: 'OK',
      message: 'Connection successful!',
    });
    expect(await callCount()).toBe(before);
  });

  it("fails a wrong key with the server's message, and a URL where another server answers", async () => {
    const credential = new OutboundCallTriggerApi();
    expect(await testCredential(credential, { baseUrl, apiKey: keyWithTypo(tenant.key) })).toEqual({
      status: 'Error',
      message: 'Invalid API key',
    });
    // Any server but the service: it answers 200 with a body that is not the service's envelope.
    const other = await startReceiver();
    expect(await testCredential(credential, { baseUrl: other.url, apiKey: tenant.key })).toEqual({
      status: 'Error',
      message: 'This base URL does not answer as the Outbound Call Trigger API',
    });
    await other.stop();
  });
});

describe('the npm package', () => {
  it('packs the build, its icons and codex files, the README and package.json, and nothing else', () => {
    const manifest = JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
      name: string;
      keywords: string[];
      dependencies?: object;
      peerDependencies: Record<string, string>;
      n8n: { n8nNodesApiVersion: number; nodes: string[]; credentials: string[] };
    };
    expect(manifest.name).toMatch(/^n8n-nodes-/);
    expect(manifest.keywords).toContain('n8n-community-node-package');
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies).toEqual({ 'n8n-workflow': '*' });
    expect(manifest.n8n.n8nNodesApiVersion).toBe(1);

    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: PACKAGE_DIR,
        encoding: 'utf8',
        timeout: 60_000,
      }),
    ) as [{ files: { path: string }[] }];
    const files = packed.files.map((f) => f.path).sort();
    for (const entry of [...manifest.n8n.nodes, ...manifest.n8n.credentials]) expect(files).toContain(entry);
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'package.json',
        'dist/icons/outbound-call-trigger.svg',
        'dist/icons/outbound-call-trigger.dark.svg',
        'dist/nodes/OutboundCall/OutboundCall.node.json',
        'dist/nodes/OutboundCallTriggerTrigger/OutboundCallTriggerTrigger.node.json',
      ]),
    );
    const unexpected = files.filter(
      (file) => !['README.md', 'package.json'].includes(file) && !/^dist\/.+\.(js|js\.map|d\.ts|json|svg)$/.test(file),
    );
    expect(unexpected).toEqual([]);
  });
});
