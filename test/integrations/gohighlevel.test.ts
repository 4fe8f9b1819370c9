// The GoHighLevel recipe of docs/integrations.md: the request a workflow's "Custom Webhook" action sends (POST, Bearer
// key, JSON body and Idempotency-Key read from the document itself, merge fields filled in), replayed against the real
// server over HTTP; the call it makes, a re-run of the action, and the contact values HighLevel can hand over that
// the trigger refuses (a phone not in E.164, an empty email).
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, keyWithTypo, type Tenant } from '../helpers/fixtures.js';
import { TRIGGER_URL } from '../helpers/trigger.js';

let app: App;
let tenant: Tenant;
let baseUrl: string;
let template: { body: string; idempotencyKey: string };

beforeAll(async () => {
  template = await recipe();
  ({ app } = await buildTestApp());
  tenant = await createTenant(app.storage, { name: 'GHL Agency' });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
});

/** A contact as HighLevel's merge fields give it: {{contact.id}}, {{contact.phone}}, names, email. */
interface Contact {
  id: string;
  phone: string;
  first_name: string;
  last_name: string;
  email: string;
}

const ADA: Contact = {
  id: 'kG7xQ2nB4vR9pL1sT3wY',
  phone: '+14155552671',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@example.com',
};
const LOCATION_ID = 've9EPM428h8vShlRW1KT';

/** The action's configuration as docs/integrations.md gives it: the body's JSON block and the Idempotency-Key row. */
async function recipe(): Promise<{ body: string; idempotencyKey: string }> {
  const markdown = await fs.readFile(path.resolve(import.meta.dirname, '../../docs/integrations.md'), 'utf8');
  const section = markdown.slice(markdown.indexOf('### Placing a call: the Custom Webhook action'));
  const body = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  const idempotencyKey = /\| Header \| `Idempotency-Key: ([^`]+)` \|/.exec(section)?.[1];
  if (!body || !idempotencyKey) throw new Error('docs/integrations.md: no Custom Webhook body or Idempotency-Key');
  return { body, idempotencyKey };
}

/** HighLevel substitutes each {{...}} with the contact's value as text (an empty string when it has none). */
function fill(template: string, contact: Contact): string {
  return template.replace(/\{\{(\w+)\.(\w+)\}\}/g, (whole, object: string, field: string) => {
    if (object === 'location' && field === 'id') return LOCATION_ID;
    if (object === 'contact' && field in contact) return contact[field as keyof Contact];
    throw new Error(`the test fills no ${whole}`);
  });
}

/** The request the action sends for `contact`, merge fields filled in. */
function customWebhookRequest(contact: Contact, key = tenant.key): RequestInit {
  return {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': fill(template.idempotencyKey, contact),
      // HighLevel documents no User-Agent for the action; the service reads none, so any value (or none) will do.
      'user-agent': 'HighLevel-Workflow-Stand-In/1.0',
    },
    body: fill(template.body, contact),
  };
}

const send = (request: RequestInit) => fetch(`${baseUrl}${TRIGGER_URL}`, request);

describe('GoHighLevel Custom Webhook action', () => {
  it('places the call with the contact in it and its id in metadata', async () => {
    const response = await send(customWebhookRequest(ADA));
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { success: boolean; call_id: string; status: string };
    expect(answer).toMatchObject({ success: true, status: 'initiated' });
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: answer.call_id } });
    expect(call).toMatchObject({
      accountId: tenant.accountId,
      phoneNumber: '+14155552671',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      metadata: {
        ghl_contact_id: ADA.id,
        ghl_location_id: LOCATION_ID,
        source: 'gohighlevel',
        workflow: 'new-lead-call',
      },
    });
  });

  it('a re-run of the action for the same contact is the same call, not a second one', async () => {
    const contact = { ...ADA, id: 'Zr8cN1mW5qT2hJ6kD0aE' };
    const first = await send(customWebhookRequest(contact));
    const again = await send(customWebhookRequest(contact));
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const ids = [(await first.json()) as { call_id: string }, (await again.json()) as { call_id: string }];
    expect(ids[1]!.call_id).toBe(ids[0]!.call_id);
    const stored = await prismaOf(app).call.count({
      where: { accountId: tenant.accountId, metadata: { path: ['ghl_contact_id'], equals: contact.id } },
    });
    expect(stored).toBe(1);
  });

  it('a contact without a last name still calls (the name keeps the space the template leaves)', async () => {
    const response = await send(customWebhookRequest({ ...ADA, id: 'Qq1', last_name: '' }));
    expect(response.status).toBe(200);
    const { call_id } = (await response.json()) as { call_id: string };
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: call_id } })).name).toBe('Ada ');
  });

  it.each(['14155552671', '+1 415-555-2671', '(415) 555-2671', '+1 (415) 555-2671', '415.555.2671'])(
    'a phone as a contact may hold it, %s, is the clear 400 and no call',
    async (phone) => {
      const contact = { ...ADA, id: `bad-${phone.replace(/\W/g, '')}`, phone };
      const response = await send(customWebhookRequest(contact));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ success: false, error: 'Invalid phone number format' });
      const stored = await prismaOf(app).call.count({
        where: { metadata: { path: ['ghl_contact_id'], equals: contact.id } },
      });
      expect(stored).toBe(0);
    },
  );

  it('a contact without an email is a 400 naming the field: the recipe leaves email out unless every contact has one', async () => {
    const response = await send(customWebhookRequest({ ...ADA, id: 'NoMail1', email: '' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ success: false, error: 'email must be a valid email address' });
  });

  it('a name with a double quote pasted in unescaped is the 400 for a body that is not JSON', async () => {
    const response = await send(customWebhookRequest({ ...ADA, id: 'Quote1', first_name: 'Ada "The Countess"' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      success: false,
      error: 'Request body is not valid JSON, or contains a forbidden __proto__ or constructor.prototype key',
    });
  });

  it('a wrong key in the Authorization header is 401', async () => {
    const response = await send(customWebhookRequest(ADA, keyWithTypo(tenant.key)));
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ success: false, error: 'Invalid API key' });
  });
});
