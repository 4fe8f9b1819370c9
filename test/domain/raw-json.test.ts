// JSON text kept as written: members cut out of a body, entries in written order, raw text spliced into output.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  hasRepeatedKey,
  memberText,
  minify,
  objectEntries,
  RawJson,
  stringifyWithRaw,
} from '../../src/domain/raw-json.js';

const json = fc.jsonValue();

describe('raw JSON', () => {
  it('memberText gives the member as JSON.stringify writes it, for any object written with any spacing', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json), fc.constantFrom(0, 2, '\t'), (object, space) => {
        const text = JSON.stringify({ before: 1, metadata: object, after: [1] }, null, space);
        expect(memberText(text, 'metadata')).toBe(JSON.stringify(object));
      }),
    );
  });

  it('objectEntries keeps written order, integer-like keys included, and decodes escaped keys', () => {
    const text = '{ "b" : 1, "10": {"x": [1, "]"]}, "2":"}", "\\u0061": null }';
    expect(objectEntries(text)).toEqual([
      ['b', '1'],
      ['10', '{"x": [1, "]"]}'],
      ['2', '"}"'],
      ['a', 'null'],
    ]);
    expect(objectEntries(' {} ')).toEqual([]);
  });

  it('the last of a repeated member counts, as in JSON.parse; repeats are detected', () => {
    expect(memberText('{"metadata":{"a":1},"metadata":{"b":2}}', 'metadata')).toBe('{"b":2}');
    expect(hasRepeatedKey('{"a":1,"\\u0061":2}')).toBe(true);
    expect(hasRepeatedKey('{"a":1,"A":2}')).toBe(false);
  });

  it('minify drops whitespace outside strings only', () => {
    expect(minify('{ "a b" : [ 1 ,\n\t"c  d" ] }')).toBe('{"a b":[1,"c  d"]}');
  });

  it('stringifyWithRaw writes RawJson as its text and equals JSON.stringify otherwise', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(stringifyWithRaw(value)).toBe(JSON.stringify(value));
        expect(stringifyWithRaw({ a: 'x', raw: new RawJson('{"2":1,"1":2}'), b: value })).toBe(
          `{"a":"x","raw":{"2":1,"1":2},"b":${JSON.stringify(value)}}`,
        );
      }),
    );
  });

  it('a string that looks like the placeholder is left alone', () => {
    const lookalike = { s: '\u0000abc:0', t: '"\\u0000x:0"', raw: new RawJson('[1]') };
    expect(JSON.parse(stringifyWithRaw(lookalike))).toEqual({ s: '\u0000abc:0', t: '"\\u0000x:0"', raw: [1] });
  });
});
