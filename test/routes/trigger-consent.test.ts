// The trigger's consent record (issue 48.4): stored as validated and in the call's view (every event's data); every
// hostile value a 400 naming the field that stores nothing; "consent required" by the agent's setting or by its
// agency's calling rules (only while they are on), answered after the agent's selection and before its window.
import { beforeAll, describe, expect, it } from 'vitest';
import { COMPLIANCE_ERRORS, CONSENT_SOURCE_MAX } from '../../schemas/compliance.js';
import { errorMessage } from '../../schemas/error-codes.js';
import { DATE_TIME_RULE, NAME_TEXT_RULE } from '../../schemas/text.js';
import type { App } from '../../src/app.js';
import { createAgent } from '../../src/admin/agents.js';
import { callView } from '../../src/calls/call-view.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, updateAgentSettings, type Tenant } from '../helpers/fixtures.js';
import { storeAgencyCallingRules, storeCallingRulesAsIs } from '../helpers/seed/compliance-settings.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

let app: App;
let tenant: Tenant;
const now = new Date('2055-03-15T15:00:00Z'); // a Monday: 11:00 in New York
const MIN = 60_000;
const at = (ms: number) => new Date(now.getTime() + ms).toISOString();

const CONSENT = {
  type: 'express_written',
  obtained_at: '2055-03-01T09:30:00-05:00',
  source: 'Web form, example.com/quote',
  evidence_url: 'https://example.com/consents/L-42.pdf',
};

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => now }));
  tenant = await createTenant(app.storage);
});

const error = (message: string) => ({ success: false, error: message });
const callCount = () => prismaOf(app).call.count();
const withConsent = (consent: unknown, extra: object = {}) =>
  trigger(app, tenant.key, { phone_number: '+14155552671', consent, ...extra });

describe('consent is stored as given and is in every event', () => {
  it('200; the record stored as validated, in the schema order, and in the call view every event carries', async () => {
    // Its keys in another order than the schema's: the view publishes them in the schema's.
    const { evidence_url, source, obtained_at, type } = CONSENT;
    const res = await withConsent({ evidence_url, source, obtained_at, type });
    expect(res.statusCode, res.body).toBe(200);
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } });
    expect(call.consent).toEqual(CONSENT);
    const view = callView((await app.storage.calls.findCallById(call.id))!);
    expect(JSON.stringify(view.consent)).toBe(JSON.stringify(CONSENT));
    expect(view).toMatchObject({ recipient_region: null, compliance: null });
  });

  it('without evidence_url, and without consent at all (null: today’s behaviour)', async () => {
    const noEvidence: Partial<typeof CONSENT> = { ...CONSENT };
    delete noEvidence.evidence_url;
    const res = await withConsent(noEvidence);
    expect(res.statusCode).toBe(200);
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } })).consent).toEqual(noEvidence);
    const plain = await trigger(app, tenant.key, { phone_number: '+14155552671' });
    expect(plain.statusCode).toBe(200);
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(plain) } });
    expect([call.consent, call.recipientRegion]).toEqual([null, null]);
  });

  it('obtained_at up to 5 minutes ahead of the server’s clock is now (skew); any offset is read', async () => {
    expect((await withConsent({ ...CONSENT, obtained_at: at(5 * MIN) })).statusCode).toBe(200);
    expect((await withConsent({ ...CONSENT, obtained_at: '2055-03-15T20:04:00+05:00' })).statusCode).toBe(200);
  });

  it('a source of exactly 200 characters (code points: emoji count one) is accepted', async () => {
    expect((await withConsent({ ...CONSENT, source: '😀'.repeat(CONSENT_SOURCE_MAX) })).statusCode).toBe(200);
  });
});

describe('consent and Idempotency-Key', () => {
  it('the same body again is replayed; another consent under the same key is 422; a refused one is not remembered', async () => {
    const headers = { 'idempotency-key': 'consent-replay-1' };
    const body = { phone_number: '+14155552671', consent: CONSENT, recipient_region: 'US-NY' };
    const first = await trigger(app, tenant.key, body, headers);
    expect(first.statusCode).toBe(200);
    const again = await trigger(app, tenant.key, body, headers);
    expect([again.statusCode, again.headers['idempotent-replayed'], callIdOf(again)]).toEqual([
      200,
      'true',
      callIdOf(first),
    ]);
    const other = await trigger(app, tenant.key, { ...body, consent: { ...CONSENT, source: 'Phone' } }, headers);
    expect(other.statusCode).toBe(422);
    // A trigger refused for its consent leaves its key free for the corrected one.
    const retry = { 'idempotency-key': 'consent-replay-2' };
    const future = { ...body, consent: { ...CONSENT, obtained_at: at(60 * MIN) } };
    expect((await trigger(app, tenant.key, future, retry)).statusCode).toBe(400);
    expect((await trigger(app, tenant.key, body, retry)).statusCode).toBe(200);
  });
});

describe('a hostile consent is a 400 naming the field, and nothing is stored', () => {
  const cases: [string, unknown, string][] = [
    ['a string', 'yes', 'consent must be a JSON object'],
    ['an array', [CONSENT], 'consent must be a JSON object'],
    ['null', null, 'consent must be a JSON object'],
    ['no type', { ...CONSENT, type: undefined }, 'consent.type is required'],
    [
      'an unknown type',
      { ...CONSENT, type: 'implied' },
      'consent.type must be one of express_written, express, established_business_relationship, inquiry: the kind of consent the callee gave',
    ],
    ['a type of the wrong case', { ...CONSENT, type: 'EXPRESS' }, 'consent.type must be one of'],
    ['no obtained_at', { ...CONSENT, obtained_at: undefined }, 'consent.obtained_at is required'],
    ['a number for obtained_at', { ...CONSENT, obtained_at: 1_700_000_000 }, 'consent.obtained_at must be a string'],
    [
      'obtained_at without its offset',
      { ...CONSENT, obtained_at: '2055-03-01T09:30:00' },
      `consent.obtained_at ${DATE_TIME_RULE}`,
    ],
    [
      'obtained_at on a day that does not exist',
      { ...CONSENT, obtained_at: '2055-02-30T09:30:00Z' },
      `consent.obtained_at ${DATE_TIME_RULE}`,
    ],
    ['obtained_at in the future', { ...CONSENT, obtained_at: at(5 * MIN + 1000) }, COMPLIANCE_ERRORS.consentInFuture],
    ['obtained_at years ahead', { ...CONSENT, obtained_at: '2058-01-01T00:00:00Z' }, COMPLIANCE_ERRORS.consentInFuture],
    ['no source', { ...CONSENT, source: undefined }, 'consent.source is required'],
    ['an empty source', { ...CONSENT, source: '' }, 'consent.source must not be empty'],
    [
      'a source of 201 characters',
      { ...CONSENT, source: 'x'.repeat(CONSENT_SOURCE_MAX + 1) },
      'consent.source must be at most 200 characters',
    ],
    ['a source with a control character', { ...CONSENT, source: 'Web\u0007form' }, `consent.source ${NAME_TEXT_RULE}`],
    ['a source with a C1 control', { ...CONSENT, source: 'Web\u0085form' }, `consent.source ${NAME_TEXT_RULE}`],
    ['a source with NUL', { ...CONSENT, source: 'Web\u0000form' }, `consent.source ${NAME_TEXT_RULE}`],
    [
      'a source with an unpaired surrogate',
      { ...CONSENT, source: 'Web\ud800form' },
      `consent.source ${NAME_TEXT_RULE}`,
    ],
    ['a number for source', { ...CONSENT, source: 42 }, 'consent.source must be a string'],
    [
      'an http evidence_url',
      { ...CONSENT, evidence_url: 'http://example.com/c.pdf' },
      'consent.evidence_url must match',
    ],
    [
      'a javascript: evidence_url',
      { ...CONSENT, evidence_url: 'javascript:alert(1)' },
      'consent.evidence_url must match',
    ],
    [
      'an evidence_url with a space',
      { ...CONSENT, evidence_url: 'https://example.com/a b' },
      'consent.evidence_url must match',
    ],
    [
      'an evidence_url with a control character',
      { ...CONSENT, evidence_url: 'https://example.com/\u0001' },
      'consent.evidence_url must match',
    ],
    [
      'an evidence_url of 2,001 characters',
      { ...CONSENT, evidence_url: `https://example.com/${'a'.repeat(1981)}` },
      'consent.evidence_url must be at most 2000 characters',
    ],
    ['an empty evidence_url', { ...CONSENT, evidence_url: '' }, 'consent.evidence_url must match'],
    ['an unknown field', { ...CONSENT, signed_by: 'Ada' }, 'consent.signed_by is not a known field'],
    ['a nested object for source', { ...CONSENT, source: { text: 'x' } }, 'consent.source must be a string'],
  ];
  for (const [what, consent, message] of cases) {
    it(`${what}: 400 "${message.slice(0, 60)}..."`, async () => {
      const before = await callCount();
      const res = await withConsent(consent);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json<{ error: string }>().error.startsWith(message), res.body).toBe(true);
      expect(await callCount()).toBe(before);
    });
  }

  it('a huge consent (many unknown fields) is refused by its first unknown field, or as too large', async () => {
    const huge = { ...CONSENT, ...Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`k${i}`, 'v'])) };
    const res = await withConsent(huge);
    expect(res.statusCode).toBe(413);
    const many = { ...CONSENT, ...Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i])) };
    const refused = await withConsent(many);
    expect([refused.statusCode, refused.json()]).toEqual([400, error('consent.k0 is not a known field')]);
  });

  it('NUL in an unknown key of consent is refused too', async () => {
    const res = await trigger(
      app,
      tenant.key,
      `{"phone_number":"+14155552671","consent":${JSON.stringify({ ...CONSENT, ['a\u0000']: 1 })}}`,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: string }>().error).toMatch(/^consent/);
  });

  it('a future obtained_at is refused before the agent is read: an unknown agent_id does not change the answer', async () => {
    const res = await withConsent(
      { ...CONSENT, obtained_at: at(60 * MIN) },
      { agent_id: '0190a0b0-0000-7000-8000-00000000dead' },
    );
    expect([res.statusCode, res.json()]).toEqual([400, error(COMPLIANCE_ERRORS.consentInFuture)]);
  });
});

describe('consent required', () => {
  it("the agent's setting: 400 Consent is required for this agent without it, nothing stored; 200 with it", async () => {
    const agency = await createTenant(app.storage, { name: 'Consent Agency' });
    await updateAgentSettings(app.storage, agency.agentId, { consentRequired: 'on' });
    const before = await callCount();
    const refused = await trigger(app, agency.key, { phone_number: '+14155552671' });
    expect([refused.statusCode, refused.json()]).toEqual([400, error(COMPLIANCE_ERRORS.consentRequired)]);
    expect(errorMessage('CONSENT_REQUIRED')).toBe(COMPLIANCE_ERRORS.consentRequired);
    expect(await callCount()).toBe(before);
    const accepted = await trigger(app, agency.key, { phone_number: '+14155552671', consent: CONSENT });
    expect(accepted.statusCode).toBe(200);
    // Switched off again: the next trigger goes through without it.
    await updateAgentSettings(app.storage, agency.agentId, { consentRequired: 'off' });
    expect((await trigger(app, agency.key, { phone_number: '+14155552671' })).statusCode).toBe(200);
  });

  it('the setting of an agent named by agent_id (not the default) applies too', async () => {
    const agent = await createAgent(app.storage, {
      accountId: tenant.accountId,
      name: 'Needs consent',
      phone: '+14155550199',
      consentRequired: 'on',
      now: app.now(),
    });
    const res = await trigger(app, tenant.key, { phone_number: '+14155552671', agent_id: agent.id });
    expect([res.statusCode, res.json()]).toEqual([400, error(COMPLIANCE_ERRORS.consentRequired)]);
    const ok = await trigger(app, tenant.key, { phone_number: '+14155552671', agent_id: agent.id, consent: CONSENT });
    expect(ok.statusCode).toBe(200);
  });

  it("the agency's setting, while its rules are on, for its own keys and its clients' keys; off, it asks nothing", async () => {
    const agency = await createTenant(app.storage, { name: 'Rules Agency' });
    const client = await createClientTenant(app.storage, agency.accountId, { name: 'Rules Client' });
    const plain = { phone_number: '+14155552671' };
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, { consent_required: true });
    for (const key of [agency.key, client.key]) {
      const res = await trigger(app, key, plain);
      expect([res.statusCode, res.json()]).toEqual([400, error(COMPLIANCE_ERRORS.consentRequired)]);
      expect((await trigger(app, key, { ...plain, consent: CONSENT })).statusCode).toBe(200);
    }
    // The rules switched off (consent_required still true in the stored settings): nothing is required.
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, { enabled: false, consent_required: true });
    for (const key of [agency.key, client.key]) expect((await trigger(app, key, plain)).statusCode).toBe(200);
    // On, without consent_required: nothing is required either.
    await storeAgencyCallingRules(prismaOf(app), agency.accountId, { consent_required: false });
    expect((await trigger(app, agency.key, plain)).statusCode).toBe(200);
    // A client's own calling_rules cannot switch the agency's requirement on or off.
    await storeCallingRulesAsIs(prismaOf(app), client.accountId, { enabled: true, consent_required: true });
    expect((await trigger(app, client.key, plain)).statusCode).toBe(200);
  });

  it('comes after the agent checks and before the calling window (error order)', async () => {
    const agency = await createTenant(app.storage, { name: 'Order Agency', phone: null });
    await updateAgentSettings(app.storage, agency.agentId, { consentRequired: 'on' });
    // No phone number: the agent's own error first.
    const noPhone = await trigger(app, agency.key, { phone_number: '+14155552671' });
    expect(noPhone.json()).toEqual(error(errorMessage('AGENT_HAS_NO_PHONE')));
    // A closed window and reject: consent is answered first (it does not depend on the clock).
    await updateAgentSettings(app.storage, agency.agentId, {
      phone: '+14155550123',
      windows: ['sat-sun 09:00-10:00'],
      outsideWindow: 'reject',
    });
    const closed = await trigger(app, agency.key, { phone_number: '+14155552671' });
    expect(closed.json()).toEqual(error(COMPLIANCE_ERRORS.consentRequired));
    const withIt = await trigger(app, agency.key, { phone_number: '+14155552671', consent: CONSENT });
    expect(withIt.json()).toEqual(error(errorMessage('OUTSIDE_CALLING_WINDOW')));
  });
});
