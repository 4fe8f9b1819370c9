// The lifecycle state machine: legal steps, refused ones, harmless duplicates and out-of-order updates.
import { describe, expect, it } from 'vitest';
import { plan, type CallStatus, type CallUpdate } from '../../src/domain/call-lifecycle.js';

const steps = (status: CallStatus, update: CallUpdate) =>
  plan(status, update).map(
    (t) => `${t.from}>${t.to}${t.event ? `:${t.event}` : ''}${t.failureReason ? `(${t.failureReason})` : ''}`,
  );

describe('call lifecycle', () => {
  it.each<[CallStatus, CallUpdate, string[]]>([
    ['initiated', { kind: 'dialing' }, ['initiated>dialing:call.started']],
    ['dialing', { kind: 'answered' }, ['dialing>in_progress']],
    ['in_progress', { kind: 'completed' }, ['in_progress>completed:call.completed']],
    ['dialing', { kind: 'completed' }, ['dialing>in_progress', 'in_progress>completed:call.completed']],
    ['initiated', { kind: 'failed', reason: 'expired' }, ['initiated>failed:call.failed(expired)']],
    ['dialing', { kind: 'failed', reason: 'busy' }, ['dialing>failed:call.failed(busy)']],
    ['in_progress', { kind: 'failed', reason: 'provider_error' }, ['in_progress>failed:call.failed(provider_error)']],
  ])('%s + %j -> %j', (status, update, expected) => {
    expect(steps(status, update)).toEqual(expected);
  });

  it.each<[string, CallStatus, CallUpdate]>([
    ['a duplicate dialing', 'dialing', { kind: 'dialing' }],
    ['a duplicate answer', 'in_progress', { kind: 'answered' }],
    ['an answer after completion', 'completed', { kind: 'answered' }],
    ['a late ringing after answer', 'in_progress', { kind: 'dialing' }],
    ['a completion after failure', 'failed', { kind: 'completed' }],
    ['a second failure', 'failed', { kind: 'failed', reason: 'busy' }],
    ['a failure after completion', 'completed', { kind: 'failed', reason: 'canceled' }],
    ['an answer before dialling', 'initiated', { kind: 'answered' }],
    ['a completion before dialling', 'initiated', { kind: 'completed' }],
  ])('%s changes nothing', (_name, status, update) => {
    expect(plan(status, update)).toEqual([]);
  });

  it('any sequence of updates reaches at most one terminal status and at most one terminal event', () => {
    const updates: CallUpdate[] = [
      { kind: 'dialing' },
      { kind: 'answered' },
      { kind: 'completed' },
      { kind: 'failed', reason: 'busy' },
    ];
    for (let seed = 0; seed < 2000; seed++) {
      let status: CallStatus = 'initiated';
      let terminalEvents = 0;
      let x = seed;
      for (let i = 0; i < 8; i++) {
        x = (x * 1103515245 + 12345) & 0x7fffffff;
        for (const t of plan(status, updates[x % updates.length]!)) {
          if (t.event === 'call.completed' || t.event === 'call.failed') terminalEvents++;
          status = t.to;
        }
      }
      expect(terminalEvents).toBeLessThanOrEqual(1);
    }
  });
});
