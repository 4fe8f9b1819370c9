// The calling rules cost the trigger no round trip of its own (issue 48.8): the agency's settings come with the key's
// lookup, so with the rules on (consent required, an agent whose policy is reject) an accepted trigger still sends the
// lookup and the acceptance alone, and a refused one the lookup alone. The one read they add is an agency's key on a
// client's agent that rejects, for the client's narrower hours.
import type pg from 'pg';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { COMPLIANCE_ERRORS } from '../../schemas/compliance.js';
import type { App } from '../../src/app.js';
import { buildTestApp, poolsOf, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { storeAgencyCallingRules } from '../helpers/seed/compliance-settings.js';
import { trigger } from '../helpers/trigger.js';

let app: App;
let agency: Tenant;
let now = new Date('2056-01-12T15:00:00Z'); // a Wednesday: 10:00 in New York
const FLORIDA = '+13055550123';
const CONSENT = { type: 'express', obtained_at: '2056-01-02T10:00:00Z', source: 'Web form' };

afterEach(() => vi.restoreAllMocks());

/** The names of the statements sent through a pool from now on (unnamed ones as ''). */
function statementNames(pool: pg.Pool): string[] {
  const names: string[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  vi.spyOn(pool, 'query').mockImplementation((...args: unknown[]) => {
    names.push((args[0] as { name?: string }).name ?? '');
    return query(...args);
  });
  return names;
}

beforeAll(async () => {
  ({ app } = await buildTestApp({ pools: true, clock: () => now }));
  agency = await createTenant(app.storage, { windows: ['daily 00:00-24:00'], outsideWindow: 'reject' });
  await storeAgencyCallingRules(prismaOf(app), agency.accountId, { consent_required: true });
});

describe('the calling rules on the request path', () => {
  it('accepted: the key lookup and the acceptance, nothing more', async () => {
    now = new Date('2056-01-12T15:00:00Z');
    const sent = statementNames(poolsOf(app).requests);
    const res = await trigger(app, agency.key, { phone_number: FLORIDA, consent: CONSENT, recipient_region: 'US-FL' });
    expect(res.statusCode, res.body).toBe(200);
    expect(sent).toEqual(['oct_key_lookup', 'oct_accept_call_v4']);
  });

  it('refused for consent, or for the hours: the key lookup alone', async () => {
    const sent = statementNames(poolsOf(app).requests);
    const noConsent = await trigger(app, agency.key, { phone_number: FLORIDA });
    expect(noConsent.json()).toEqual({ success: false, error: COMPLIANCE_ERRORS.consentRequired });
    now = new Date('2056-01-13T01:30:00Z'); // 20:30 in Miami
    const late = await trigger(app, agency.key, { phone_number: FLORIDA, consent: CONSENT });
    expect(late.json()).toEqual({ success: false, error: COMPLIANCE_ERRORS.outsideHours });
    expect(sent).toEqual(['oct_key_lookup', 'oct_key_lookup']);
  });

  it("an agency's key on a client's agent that rejects: one read more, the client's settings", async () => {
    const client = await createClientTenant(app.storage, agency.accountId, {
      windows: ['daily 00:00-24:00'],
      outsideWindow: 'reject',
    });
    now = new Date('2056-01-12T15:00:00Z');
    const sent = statementNames(poolsOf(app).requests);
    const res = await trigger(app, agency.key, { phone_number: FLORIDA, consent: CONSENT, agent_id: client.agentId });
    expect(res.statusCode, res.body).toBe(200);
    // The agent named and the client's settings (Prisma's statements, named by the adapter), then the acceptance.
    const prisma: unknown = expect.stringMatching(/^oct_p\d+$/);
    expect(sent).toEqual(['oct_key_lookup', prisma, prisma, 'oct_accept_call_v4']);
  });
});
