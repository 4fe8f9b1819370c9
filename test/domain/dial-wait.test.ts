// A waiting call's wait (src/domain/dial-wait.ts): the calling rules' hold (held_by) comes first when it ends after
// the call's schedule or next attempt, and only while it lies ahead; otherwise the schedule, the retry, the window and
// the slot are read as before.
import { describe, expect, it } from 'vitest';
import { dialWait, type WaitingTimes } from '../../src/domain/dial-wait.js';

const NOW = new Date('2056-06-01T12:00:00Z');
const at = (minutes: number) => new Date(NOW.getTime() + minutes * 60_000);
const waiting = (over: Partial<WaitingTimes>): WaitingTimes => ({
  status: 'initiated',
  notBefore: NOW,
  nextAttemptAt: null,
  scheduledAt: null,
  ...over,
});

describe('dialWait and the calling rules’ hold', () => {
  it('names the rules, or the cap, until the moment they next allow a dial', () => {
    expect(dialWait(waiting({ heldBy: 'calling_rules', notBefore: at(90) }), NOW)).toEqual({
      first: 'rules',
      firstAt: at(90),
      thenWindow: false,
      dialAt: at(90),
    });
    expect(dialWait(waiting({ heldBy: 'cap', notBefore: at(30) }), NOW)?.first).toBe('cap');
  });

  it('holds after a schedule or a retry that comes first: the rules decide the dial', () => {
    expect(dialWait(waiting({ heldBy: 'calling_rules', notBefore: at(90), scheduledAt: at(30) }), NOW)).toMatchObject({
      first: 'rules',
      dialAt: at(90),
    });
    expect(dialWait(waiting({ heldBy: 'cap', notBefore: at(90), nextAttemptAt: at(10) }), NOW)?.first).toBe('cap');
  });

  it('is no hold once its moment has come, nor before a later schedule', () => {
    // Due: the dispatcher checks again; until then it waits for a slot.
    expect(dialWait(waiting({ heldBy: 'calling_rules', notBefore: NOW }), NOW)?.first).toBe('slot');
    expect(dialWait(waiting({ heldBy: 'calling_rules', notBefore: at(30), scheduledAt: at(30) }), NOW)?.first).toBe(
      'schedule',
    );
  });

  it('reads a call the rules do not hold as before', () => {
    expect(dialWait(waiting({ notBefore: at(90) }), NOW)?.first).toBe('window');
    expect(dialWait(waiting({ heldBy: null, notBefore: at(90) }), NOW)?.first).toBe('window');
    expect(dialWait({ ...waiting({ heldBy: 'cap', notBefore: at(90) }), status: 'completed' }, NOW)).toBeNull();
  });
});
