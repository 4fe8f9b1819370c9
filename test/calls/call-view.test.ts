// The public view of a stored call (the `data` of every webhook event): derived from the CallData schema, in its
// order, with the bytes webhook receivers have always been sent (their bodies are signed).
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { CallData } from '../../schemas/call.js';
import { callView, viewFor } from '../../src/calls/call-view.js';
import { RawJson, stringifyWithRaw } from '../../src/domain/raw-json.js';
import type { CallRow } from '../../src/storage/index.js';

const ended: CallRow = {
  id: '0190a0b0-0000-7000-8000-000000000001',
  accountId: '0190a0b0-0000-7000-8000-0000000000aa',
  agencyId: '0190a0b0-0000-7000-8000-0000000000aa',
  agentId: '0190a0b0-0000-7000-8000-000000000002',
  phoneNumber: '+14155552671',
  fromNumber: '+14155550100',
  name: 'Ann',
  email: 'ann@example.com',
  metadata: { b: 1, a: 'x' },
  status: 'completed',
  failureReason: null,
  notBefore: new Date('2054-11-23T15:00:00Z'),
  expiresAt: new Date('2054-11-24T15:00:00Z'),
  createdAt: new Date('2054-11-23T15:00:00.123Z'),
  updatedAt: new Date('2054-11-23T15:01:02Z'),
  startedAt: new Date('2054-11-23T15:00:01Z'),
  answeredAt: new Date('2054-11-23T15:00:02.5Z'),
  endedAt: new Date('2054-11-23T15:01:02Z'),
  durationSeconds: 60,
  providerCallId: 'CA123',
  dialAttempts: 2,
  leaseOwner: null,
  leaseExpiresAt: null,
  attempt: 2,
  attemptOutcomes: [
    { attempt: 1, outcome: 'busy', at: '2054-11-23T14:00:00.000Z' },
    { attempt: 2, outcome: 'completed', at: '2054-11-23T15:01:02.000Z' },
  ],
  nextAttemptAt: null,
  answeredBy: 'human',
  outcome: null,
  voicemailLeft: false,
  scheduledAt: new Date('2054-11-23T15:00:00Z'),
  timezone: 'America/New_York',
  timezoneSource: 'request',
  listedForAccountId: null,
  recipientRegion: null,
  consent: null,
  compliance: null,
  heldBy: null,
  carrier: null,
  carrierAccountId: null,
};

describe('callView', () => {
  it('writes every CallData property, in the schema order, as the webhook bodies have always carried it', () => {
    const view = callView(ended);
    expect(Object.keys(view)).toEqual(Object.keys(CallData.properties));
    expect(JSON.stringify(view)).toBe(
      '{"call_id":"0190a0b0-0000-7000-8000-000000000001","status":"completed",' +
        '"agent_id":"0190a0b0-0000-7000-8000-000000000002","phone_number":"+14155552671","name":"Ann",' +
        '"email":"ann@example.com","metadata":{"b":1,"a":"x"},"created_at":"2054-11-23T15:00:00.123Z",' +
        '"started_at":"2054-11-23T15:00:01.000Z","answered_at":"2054-11-23T15:00:02.500Z",' +
        '"ended_at":"2054-11-23T15:01:02.000Z","duration_seconds":60,"failure_reason":null,"attempt":2,' +
        '"attempts":2,"attempt_outcomes":[{"attempt":1,"outcome":"busy","at":"2054-11-23T14:00:00.000Z"},' +
        '{"attempt":2,"outcome":"completed","at":"2054-11-23T15:01:02.000Z"}],"answered_by":"human",' +
        '"voicemail_left":false,"scheduled_at":"2054-11-23T15:00:00.000Z","timezone":"America/New_York",' +
        '"timezone_source":"request","result":null,"recipient_region":null,"consent":null,"compliance":null}',
    );
  });

  it('consent in the schema order whatever jsonb gave back; compliance: the last record of the current attempt', () => {
    const record = (attempt: number, verdict: string) => ({
      // jsonb's order (by key length), as PostgreSQL returns it.
      cap: null,
      attempt,
      consent: 'on_record',
      reasons: [],
      verdict,
      candidates: [
        { rule: null, region: 'US-CA', allowed: true, timezone: 'America/Los_Angeles', local_time: '2054-11-23 07:00' },
      ],
      checked_at: '2054-11-23T15:00:00.000Z',
      do_not_call: 'clear',
      rules_version: '1.2.0',
    });
    const row: CallRow = {
      ...ended,
      recipientRegion: 'US-CA',
      consent: { type: 'express', source: 'Web form', obtained_at: '2054-11-20T10:00:00Z' },
      compliance: [record(1, 'allowed'), record(2, 'held'), record(2, 'allowed'), record(3, 'held')],
    };
    const view = callView(row);
    expect(view.recipient_region).toBe('US-CA');
    expect(JSON.stringify(view.consent)).toBe(
      '{"type":"express","obtained_at":"2054-11-20T10:00:00Z","source":"Web form"}',
    );
    expect(view.compliance).toMatchObject({ attempt: 2, verdict: 'allowed' });
    expect(Object.keys(view.compliance!)).toEqual([
      'attempt',
      'checked_at',
      'verdict',
      'reasons',
      'rules_version',
      'candidates',
      'cap',
      'do_not_call',
      'consent',
    ]);
    expect(Object.keys(view.compliance!.candidates[0]!)).toEqual([
      'region',
      'timezone',
      'local_time',
      'allowed',
      'rule',
    ]);
    // No record of the call's attempt (rules off, or not checked yet): null.
    expect(callView({ ...row, attempt: 4 }).compliance).toBeNull();
    expect(callView({ ...row, compliance: null }).compliance).toBeNull();
  });

  it('a waiting call: no times, no attempts, {} for no metadata; the stored text keeps its place as RawJson', () => {
    const waiting: CallRow = {
      ...ended,
      status: 'initiated',
      metadata: null,
      startedAt: null,
      answeredAt: null,
      endedAt: null,
      durationSeconds: null,
      attempt: 1,
      attemptOutcomes: null,
      answeredBy: null,
      voicemailLeft: null,
      scheduledAt: null,
    };
    const view = callView(waiting);
    expect(view).toMatchObject({ metadata: {}, started_at: null, attempts: 0, attempt_outcomes: [] });
    // What src/calls/transition.ts signs: the client's text, its key order kept, where metadata always was.
    const body = stringifyWithRaw({ ...view, metadata: new RawJson('{"2":1,"1":2}') });
    expect(body).toContain('"email":"ann@example.com","metadata":{"2":1,"1":2},"created_at":');
  });

  it('publishes a property added to the schema from the row field of its camelCase name, mapper unchanged', () => {
    const extended = Type.Object({
      ...CallData.properties,
      language: Type.Union([Type.String(), Type.Null()]),
      next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    });
    const row = { ...ended, language: 'fr-CA', nextAttemptAt: new Date('2054-11-24T09:30:00Z') };
    const view = viewFor(extended)(row);
    expect(Object.keys(view)).toEqual([...Object.keys(CallData.properties), 'language', 'next_attempt_at']);
    expect(view).toEqual({ ...callView(ended), language: 'fr-CA', next_attempt_at: '2054-11-24T09:30:00.000Z' });
  });
});
