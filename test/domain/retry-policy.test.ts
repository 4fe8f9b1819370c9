// Attempts in the lifecycle: the stored retry policy's check, the waits, which failures go back to initiated, the
// outcome each attempt records, and that any sequence of updates still ends at most once after at most max attempts.
import { describe, expect, it } from 'vitest';
import {
  plan,
  retryPolicySchemaCheck,
  retryWaitMinutes,
  RetryPolicyError,
  type CallStatus,
  type CallUpdate,
  type RetryPolicy,
} from '../../src/domain/call-lifecycle.js';

const stored = (maxAttempts: unknown, retryOn: unknown, waitsMinutes: unknown = [30, 120, 1440]) => ({
  maxAttempts,
  retryOn,
  waitsMinutes,
});

describe('retry policy as stored', () => {
  it('accepts the defaults, every retryable outcome, 1 to 5 attempts and waits of 0 minutes and more', () => {
    expect(retryPolicySchemaCheck(stored(1, []))).toEqual({
      maxAttempts: 1,
      retryOn: [],
      waitsMinutes: [30, 120, 1440],
    });
    expect(retryPolicySchemaCheck(stored(5, ['busy', 'no_answer', 'voicemail'], [0]))).toMatchObject({
      maxAttempts: 5,
      waitsMinutes: [0],
    });
  });

  it.each<[string, ReturnType<typeof stored>]>([
    ['rejected listed', stored(3, ['busy', 'rejected'])],
    ['an unknown outcome', stored(3, ['completed'])],
    ['retry_on not a list', stored(3, 'busy')],
    ['no attempts', stored(0, [])],
    ['six attempts', stored(6, ['busy'])],
    ['a fractional count', stored(2.5, ['busy'])],
    ['a count as text', stored('2', ['busy'])],
    ['no waits', stored(2, ['busy'], [])],
    ['a negative wait', stored(2, ['busy'], [-1])],
    ['a fractional wait', stored(2, ['busy'], [1.5])],
    ['a wait over a year', stored(2, ['busy'], [525_601])],
    ['waits not a list', stored(2, ['busy'], 30)],
  ])('refuses %s', (_name, value) => {
    expect(() => retryPolicySchemaCheck(value)).toThrow(RetryPolicyError);
  });

  it('waits the policy names for each attempt, the last one repeating', () => {
    const policy = retryPolicySchemaCheck(stored(5, ['busy'], [30, 120]));
    expect([1, 2, 3, 4].map((attempt) => retryWaitMinutes(policy, attempt))).toEqual([30, 120, 120, 120]);
  });
});

const policy: RetryPolicy = { maxAttempts: 3, retryOn: ['busy', 'voicemail'], waitsMinutes: [30] };

const steps = (status: CallStatus, update: CallUpdate, attempt: number, p: RetryPolicy | null = policy) =>
  plan(status, update, { attempt, policy: p }).map(
    (t) =>
      `${t.from}>${t.to}${t.event ? `:${t.event}` : ''}${t.failureReason ? `(${t.failureReason})` : ''}` +
      `${t.attemptOutcome ? ` [${t.attemptOutcome}]` : ''}`,
  );

describe('attempts in the lifecycle', () => {
  it.each<[CallStatus, CallUpdate, number, string[]]>([
    ['dialing', { kind: 'failed', reason: 'busy' }, 1, ['dialing>initiated(busy) [busy]']],
    ['dialing', { kind: 'failed', reason: 'busy' }, 2, ['dialing>initiated(busy) [busy]']],
    ['in_progress', { kind: 'failed', reason: 'voicemail' }, 1, ['in_progress>initiated(voicemail) [voicemail]']],
    // The last attempt, and outcomes the policy does not list, end the call.
    ['dialing', { kind: 'failed', reason: 'busy' }, 3, ['dialing>failed:call.failed(busy) [busy]']],
    ['dialing', { kind: 'failed', reason: 'no_answer' }, 1, ['dialing>failed:call.failed(no_answer) [no_answer]']],
    [
      'dialing',
      { kind: 'failed', reason: 'provider_error' },
      1,
      ['dialing>failed:call.failed(provider_error) [provider_error]'],
    ],
    // A provider's own cancel of a dialled attempt is recorded as its error.
    ['dialing', { kind: 'failed', reason: 'canceled' }, 1, ['dialing>failed:call.failed(canceled) [provider_error]']],
    // A waiting call that fails was not dialled: no attempt ended, nothing is retried.
    ['initiated', { kind: 'failed', reason: 'canceled' }, 2, ['initiated>failed:call.failed(canceled)']],
    ['initiated', { kind: 'failed', reason: 'busy' }, 1, ['initiated>failed:call.failed(busy)']],
    ['dialing', { kind: 'completed' }, 2, ['dialing>in_progress', 'in_progress>completed:call.completed [completed]']],
    ['initiated', { kind: 'dialing' }, 2, ['initiated>dialing:call.started']],
  ])('%s + %j at attempt %i -> %j', (status, update, attempt, expected) => {
    expect(steps(status, update, attempt)).toEqual(expected);
  });

  it('never retries rejected, even from a policy object that lists it; nor without a readable policy', () => {
    const listsRejected = { ...policy, retryOn: ['rejected'] } as unknown as RetryPolicy;
    expect(steps('dialing', { kind: 'failed', reason: 'rejected' }, 1, listsRejected)).toEqual([
      'dialing>failed:call.failed(rejected) [rejected]',
    ]);
    expect(steps('dialing', { kind: 'failed', reason: 'busy' }, 1, null)).toEqual([
      'dialing>failed:call.failed(busy) [busy]',
    ]);
    expect(plan('dialing', { kind: 'failed', reason: 'busy' })).toMatchObject([{ to: 'failed' }]);
  });

  it('any sequence of updates dials at most max_attempts times and ends with at most one terminal event', () => {
    const updates: CallUpdate[] = [
      { kind: 'dialing' },
      { kind: 'answered' },
      { kind: 'completed' },
      { kind: 'failed', reason: 'busy' },
      { kind: 'failed', reason: 'voicemail' },
      { kind: 'failed', reason: 'no_answer' },
    ];
    for (let seed = 0; seed < 2000; seed++) {
      let status: CallStatus = 'initiated';
      let attempt = 1;
      let started = 0;
      let terminal = 0;
      let x = seed;
      for (let i = 0; i < 24; i++) {
        x = (x * 1103515245 + 12345) & 0x7fffffff;
        for (const t of plan(status, updates[x % updates.length]!, { attempt, policy })) {
          if (t.event === 'call.started') started++;
          if (t.event === 'call.completed' || t.event === 'call.failed') terminal++;
          if (t.to === 'initiated') attempt++;
          status = t.to;
        }
      }
      expect(started).toBeLessThanOrEqual(policy.maxAttempts);
      expect(terminal).toBeLessThanOrEqual(1);
    }
  });
});
