// The terminal event a result arrives for during its wait: the result takes the place of data's `result: null`, and
// nothing else of the body moves (its bytes are signed), whatever the metadata holds.
import { describe, expect, it } from 'vitest';
import { eventWithResult } from '../../src/calls/runtime-result.js';

const tail = '"recipient_region":"US-FL","consent":null,"compliance":null}}';

describe('eventWithResult', () => {
  it('puts the result where data has result: null, before recipient_region', () => {
    const body = `{"type":"call.completed","data":{"call_id":"c","metadata":{"a":1},"result":null,${tail}`;
    expect(JSON.parse(eventWithResult(body, '{"outcome":"booked"}'))).toEqual({
      type: 'call.completed',
      data: {
        call_id: 'c',
        metadata: { a: 1 },
        result: { outcome: 'booked' },
        recipient_region: 'US-FL',
        consent: null,
        compliance: null,
      },
    });
  });

  it('leaves metadata that looks like it alone', () => {
    const metadata = '{"result":null,"recipient_region":"x"}';
    const body = `{"type":"call.completed","data":{"metadata":${metadata},"result":null,${tail}`;
    const out = JSON.parse(eventWithResult(body, '{"outcome":"booked"}')) as { data: Record<string, unknown> };
    expect(out.data.metadata).toEqual({ result: null, recipient_region: 'x' });
    expect(out.data.result).toEqual({ outcome: 'booked' });
  });

  it('refuses a body without the place', () => {
    expect(() => eventWithResult('{"data":{"result":{"outcome":"x"}}}', '{}')).toThrow();
  });
});
