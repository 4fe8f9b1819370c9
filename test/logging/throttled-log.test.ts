// Recurring failures as a few readable lines: one per kind per interval with a count of those left out, one when
// the failure is over; and reasons read from an error's code or cause when its message is empty.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/logging/describe-error.js';
import { ThrottledLog } from '../../src/logging/throttled-log.js';
import { logLines, type LogLine } from '../helpers/json.js';

function capture() {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...logLines(chunk.toString()));
      done();
    },
  });
  return { lines, log: pino({ level: 'info' }, sink) };
}

describe('ThrottledLog', () => {
  it('writes the first failure of a kind, then one line per interval with the count left out, then one on recovery', () => {
    const { lines, log } = capture();
    let now = 1_000_000;
    const logs = new ThrottledLog(log, { intervalMs: 10_000, now: () => now });
    // Four failures a second for 25 s, of one kind; another kind twice.
    for (let t = 0; t < 25_000; t += 250) {
      now = 1_000_000 + t;
      logs.error('pass', { err: new Error('connect ECONNREFUSED 127.0.0.1:5432') }, 'dispatcher pass failed');
    }
    logs.warn('listen', {}, 'could not LISTEN');
    logs.warn('listen', {}, 'could not LISTEN');
    now += 250;
    logs.recovered('pass', 'dispatcher passes succeed again');
    logs.recovered('pass', 'dispatcher passes succeed again');

    const pass = lines.filter((l) => l.msg === 'dispatcher pass failed');
    expect(pass).toHaveLength(3);
    expect(pass[0]).not.toHaveProperty('suppressed');
    expect(pass[1]).toMatchObject({ level: 50, suppressed: 39, failures: 41 });
    expect(pass[2]).toMatchObject({ suppressed: 39, failures: 81 });
    expect(lines.filter((l) => l.msg === 'could not LISTEN')).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'dispatcher passes succeed again')).toEqual([
      expect.objectContaining({ level: 30, failures: 100, failingForMs: 25_000 }),
    ]);

    // A new failure after recovery is news again.
    logs.error('pass', {}, 'dispatcher pass failed');
    expect(lines.filter((l) => l.msg === 'dispatcher pass failed')).toHaveLength(4);
  });

  it('a recovery without a failure writes nothing', () => {
    const { lines, log } = capture();
    new ThrottledLog(log).recovered('pass', 'fine again');
    expect(lines).toEqual([]);
  });
});

describe('describeError', () => {
  it('reads a refusal from the code when the message is empty (pg after trying every address)', () => {
    const refused = Object.assign(
      new AggregateError(
        [new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')],
        '',
      ),
      { code: 'ECONNREFUSED' },
    );
    expect(describeError(refused)).toBe('connection refused');
    expect(
      describeError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
    ).toBe('connection refused');
    expect(describeError(Object.assign(new Error('getaddrinfo ENOTFOUND db'), { code: 'ENOTFOUND' }))).toBe(
      'host not found',
    );
  });

  it('falls back to the first inner error, the cause, or the name; takes the last line of a long message', () => {
    expect(describeError(new AggregateError([new Error('first reason')], ''))).toBe('first reason');
    expect(describeError(new Error('', { cause: Object.assign(new Error(''), { code: 'ETIMEDOUT' }) }))).toBe(
      'connection timed out',
    );
    expect(describeError(new TypeError(''))).toBe('TypeError');
    expect(
      describeError(
        new Error("\nInvalid `prisma.$queryRaw()` invocation:\n\n\nCan't reach database server at db:5432"),
      ),
    ).toBe("Can't reach database server at db:5432");
    expect(describeError('plain')).toBe('plain');
  });
});
