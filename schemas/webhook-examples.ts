// Examples of each webhook event, as a real delivery carries it (field for field, in the payload's order): the
// OpenAPI document publishes them on the event schemas, docs/webhooks.md shows the same ones, and
// test/openapi/examples.test.ts checks both against the schemas.
import type { CallData } from './call.js';

/** An event of type `T` as delivered. */
export interface Example<T extends string> {
  type: T;
  timestamp: string;
  data: CallData;
}

// A call scheduled for 09:30 in the callee's zone (the trigger's recipient_timezone; its agent's calling window
// follows the callee), whose agent retries busy lines once after 30 minutes and has voicemail detection on: its first
// attempt rang busy at the scheduled time. Its agency's calling rules are on: the trigger declared the callee in New
// York (recipient_region) and gave the consent on record, and each attempt carries its decision record (compliance).

/** The scheduled call's calling-rules members, the same in both of its events: its attempt 2 was checked once. */
const SCHEDULED_CALL_RULES = {
  recipient_region: 'US-NY',
  consent: {
    type: 'express_written',
    obtained_at: '2026-11-28T18:04:11Z',
    source: 'Web form, example.com/quote',
    evidence_url: 'https://example.com/consents/L-42.pdf',
  },
  compliance: {
    attempt: 2,
    checked_at: '2026-12-01T15:00:05.000Z',
    verdict: 'allowed',
    reasons: [],
    rules_version: '1.2.0',
    candidates: [
      {
        region: 'US-NY',
        timezone: 'America/New_York',
        local_time: '2026-12-01 10:00',
        allowed: true,
        rule: 'us-tcpa-64-1200-c1',
      },
    ],
    cap: { count: 1, limit: 3, window: '24h', scope: 'agency' },
    do_not_call: 'clear',
    consent: 'on_record',
  },
} satisfies Pick<CallData, 'recipient_region' | 'consent' | 'compliance'>;

/** The scheduled call's second attempt begins. */
export const CALL_STARTED_EXAMPLE: Example<'call.started'> = {
  type: 'call.started',
  timestamp: '2026-12-01T15:00:06.000Z',
  data: {
    call_id: '01a211b0-6417-70a5-8dd0-599a2fe59dbf',
    status: 'dialing',
    agent_id: 'c51ebacf-65fa-4b45-8ce0-edeb8cafdbfb',
    phone_number: '+12125550143',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    metadata: { crm_id: 'L-42' },
    created_at: '2026-11-30T15:00:00.000Z',
    started_at: '2026-12-01T15:00:06.000Z',
    answered_at: null,
    ended_at: null,
    duration_seconds: null,
    failure_reason: null,
    attempt: 2,
    attempts: 2,
    attempt_outcomes: [{ attempt: 1, outcome: 'busy', at: '2026-12-01T14:30:06.000Z' }],
    answered_by: null,
    voicemail_left: null,
    scheduled_at: '2026-12-01T14:30:00.000Z',
    timezone: 'America/New_York',
    timezone_source: 'request',
    result: null,
    ...SCHEDULED_CALL_RULES,
  },
};

/** The scheduled call's second attempt was answered by a person, and the call ended. */
export const CALL_COMPLETED_EXAMPLE: Example<'call.completed'> = {
  type: 'call.completed',
  timestamp: '2026-12-01T15:02:53.000Z',
  data: {
    call_id: '01a211b0-6417-70a5-8dd0-599a2fe59dbf',
    status: 'completed',
    agent_id: 'c51ebacf-65fa-4b45-8ce0-edeb8cafdbfb',
    phone_number: '+12125550143',
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    metadata: { crm_id: 'L-42' },
    created_at: '2026-11-30T15:00:00.000Z',
    started_at: '2026-12-01T15:00:06.000Z',
    answered_at: '2026-12-01T15:00:12.000Z',
    ended_at: '2026-12-01T15:02:53.000Z',
    duration_seconds: 161,
    failure_reason: null,
    attempt: 2,
    attempts: 2,
    attempt_outcomes: [
      { attempt: 1, outcome: 'busy', at: '2026-12-01T14:30:06.000Z' },
      { attempt: 2, outcome: 'completed', at: '2026-12-01T15:02:53.000Z' },
    ],
    answered_by: 'human',
    voicemail_left: null,
    scheduled_at: '2026-12-01T14:30:00.000Z',
    timezone: 'America/New_York',
    timezone_source: 'request',
    result: {
      outcome: 'appointment_booked',
      summary: 'Ada booked a demo for Thursday at 10:00 and asked for the pricing sheet by e-mail.',
      data: { appointment_at: '2026-12-03T15:00:00Z', interest: 'high' },
      transcript: [
        {
          speaker: 'agent',
          text: 'Hi Ada, this is Sam from Acme. Is now a good time?',
          at: '2026-12-01T15:00:13.000Z',
        },
        { speaker: 'callee', text: 'Yes, go ahead.', at: '2026-12-01T15:00:16.000Z' },
      ],
      transcript_url: null,
      recording_url: 'https://recordings.example.com/calls/01a211b0.mp3',
      opt_out: false,
      received_at: '2026-12-01T15:02:55.000Z',
    },
    ...SCHEDULED_CALL_RULES,
  },
};

/**
 * A call whose agent leaves a message on a machine and retries voicemail once after 2 hours: both attempts reached
 * voicemail, and the message was left. Its window is read in the callee's zone, from the number's country (the
 * United Kingdom has one zone).
 */
export const CALL_FAILED_EXAMPLE: Example<'call.failed'> = {
  type: 'call.failed',
  timestamp: '2026-11-30T12:01:19.400Z',
  data: {
    call_id: '01a2118f-3c20-7b41-9e57-1d0c4a8f6e21',
    status: 'failed',
    agent_id: 'c51ebacf-65fa-4b45-8ce0-edeb8cafdbfb',
    phone_number: '+442079460958',
    name: 'Grace Hopper',
    email: null,
    metadata: { crm_id: 'L-43' },
    created_at: '2026-11-30T10:00:00.000Z',
    started_at: '2026-11-30T12:00:41.300Z',
    answered_at: '2026-11-30T12:00:48.200Z',
    ended_at: '2026-11-30T12:01:19.400Z',
    duration_seconds: 31,
    failure_reason: 'voicemail',
    attempt: 2,
    attempts: 2,
    attempt_outcomes: [
      { attempt: 1, outcome: 'voicemail', at: '2026-11-30T10:00:41.300Z' },
      { attempt: 2, outcome: 'voicemail', at: '2026-11-30T12:01:19.400Z' },
    ],
    answered_by: 'machine',
    voicemail_left: true,
    scheduled_at: null,
    timezone: 'Europe/London',
    timezone_source: 'country',
    result: null,
    recipient_region: null,
    consent: null,
    compliance: null,
  },
};

/**
 * A call canceled in the dashboard while it waited for its first dial (its agent's window was shut): it was never
 * dialled, so no attempt was made (attempt and attempts 0) and it has no times but its creation.
 */
export const CALL_FAILED_BEFORE_DIAL_EXAMPLE: Example<'call.failed'> = {
  type: 'call.failed',
  timestamp: '2026-11-30T18:12:05.250Z',
  data: {
    call_id: '01a212d4-8e5a-7c3f-b0a4-3f6d2c9e1a77',
    status: 'failed',
    agent_id: 'c51ebacf-65fa-4b45-8ce0-edeb8cafdbfb',
    phone_number: '+14155552671',
    name: 'Alan Turing',
    email: null,
    metadata: { crm_id: 'L-44' },
    created_at: '2026-11-30T17:55:00.000Z',
    started_at: null,
    answered_at: null,
    ended_at: '2026-11-30T18:12:05.250Z',
    duration_seconds: null,
    failure_reason: 'canceled',
    attempt: 0,
    attempts: 0,
    attempt_outcomes: [],
    answered_by: null,
    voicemail_left: null,
    scheduled_at: null,
    timezone: 'America/Los_Angeles',
    timezone_source: 'agent',
    result: null,
    recipient_region: null,
    consent: null,
    compliance: null,
  },
};
