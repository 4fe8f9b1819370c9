// The TwiML handed to the agent over every character a name can hold: what XML must not carry raw (line and paragraph
// separators, C1 controls, markup) is referenced and read back exactly, by xmldom and as Twilio's own builder means it.
import { DOMParser } from '@xmldom/xmldom';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { voicemailText } from '../../src/domain/voicemail.js';
import { streamTwiml, voicemailTwiml } from '../../src/routes/telephony/twilio.js';

/**
 * Parses strictly: an error (a document Twilio would refuse) fails the test. xmldom reads XML 1.1's line ends (NEL,
 * LS, PS) written raw as line feeds, which an attribute value then turns into spaces.
 */
function parameterValues(twiml: string): Record<string, string | null> {
  const document = new DOMParser({
    onError: (level, message) => {
      // Its one warning is for U+FFFD in the source, which the sweep below holds on purpose.
      if (level !== 'warning') throw new Error(`${level}: ${message}`);
    },
  }).parseFromString(twiml, 'text/xml');
  const parameters = Array.from(document.getElementsByTagName('Parameter'));
  return Object.fromEntries(parameters.map((p) => [String(p.getAttribute('name')), p.getAttribute('value')]));
}

const twimlOf = (name: string) =>
  streamTwiml('wss://a.test/s', [
    { name: 'agent_id', value: 'a' },
    { name: 'call_id', value: 'c' },
    { name: 'name', value: name },
  ]);

/** What XML 1.0 cannot carry at all (its Char production), so is dropped. */
// eslint-disable-next-line no-control-regex -- the control characters are the subject
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/u;
/** Never raw in the document: line and paragraph separators (Zl, Zp), every control character (Cc), markup. */
const NEVER_RAW = /[\p{Cc}\p{Zl}\p{Zp}<>"']|&(?!(?:amp|lt|gt|quot|apos|#x[0-9A-F]+);)/u;

describe('TwiML escaping', () => {
  it('references every line and paragraph separator, control character and markup character, as LS and NEL are', () => {
    const separators = ['\n', '\r', '\u000B', '\u000C', '\u0085', '\u2028', '\u2029'];
    const all = [...separators, '\t', '\u007F', '\u0080', '\u009F', '<', '>', '&', '"', "'"];
    // Every code point of the classes is one the pattern covers (a regression in the class shows as a new case here).
    for (let c = 0; c <= 0x10ffff; c++) {
      const ch = String.fromCodePoint(c);
      if (/[\p{Cc}\p{Zl}\p{Zp}]/u.test(ch) && !all.includes(ch)) all.push(ch);
    }
    for (const ch of all) {
      const name = `a${ch}b`;
      const twiml = twimlOf(name);
      const value = twiml.slice(
        twiml.indexOf('name="name" value="') + 19,
        twiml.indexOf('"/>', twiml.indexOf('name="name"')),
      );
      expect(NEVER_RAW.test(value), `${JSON.stringify(ch)} raw in ${value}`).toBe(false);
      expect(parameterValues(twiml).name, JSON.stringify(ch)).toBe(NOT_XML.test(ch) ? 'ab' : name);
    }
  });

  it("reads back what Twilio's own builder means, and the separators its builder writes raw and a parser loses", () => {
    for (const name of ['x\u2029y', 'x\u2028y\u0085z', 'line\r\nnext\ttab', `<'&">`, 'Zoë 😀 李 \u00a0']) {
      const response = new twilio.twiml.VoiceResponse();
      const stream = response.connect().stream({ url: 'wss://a.test/s' });
      stream.parameter({ name: 'agent_id', value: 'a' });
      stream.parameter({ name: 'call_id', value: 'c' });
      stream.parameter({ name: 'name', value: name });
      const theirs = parameterValues(response.toString());
      const ours = parameterValues(twimlOf(name));
      expect(ours, JSON.stringify(name)).toEqual({ agent_id: 'a', call_id: 'c', name });
      if (theirs.name === name) expect(ours).toEqual(theirs);
      expect(twimlOf(name)).not.toMatch(/[\u2028\u2029\u0085]/);
    }
  });

  it('reads back every other code point exactly: the whole of Unicode, in slices', () => {
    const points: string[] = [];
    // Surrogates alone: joined in a row, a high one and the low one after it would make a pair.
    for (let c = 0; c <= 0x10ffff; c += c < 0x10000 ? 1 : 0x3f)
      if (c < 0xd800 || c > 0xdfff) points.push(String.fromCodePoint(c));
    points.push('\uD800', 'x', '\uDFFF', '\uDBFF\uDFFF');
    for (let i = 0; i < points.length; i += 4096) {
      const slice = points.slice(i, i + 4096);
      const expected = slice.filter((ch) => !NOT_XML.test(ch)).join('');
      const read = parameterValues(twimlOf(slice.join(''))).name;
      // A boolean: a failure would otherwise print 4,096 characters twice.
      expect(read === expected, `slice ${i}: ${JSON.stringify(read?.slice(0, 40))}`).toBe(true);
    }
  });

  it("the voicemail message, built by Twilio's builder, carries none of them raw either: they are spoken as spaces", () => {
    const separators = ['\n', '\r', '\u000B', '\u000C', '\u0085', '\u2028', '\u2029', '\t', '\u007F', '\u009F'];
    const text = voicemailText(`Hi {{name}},${separators.join('x')} call us`, `Ada${separators.join('')}Byron`)!;
    const twiml = voicemailTwiml(text);
    expect(twiml).not.toMatch(/[\p{Cc}\p{Zl}\p{Zp}]/u);
    const said = new DOMParser().parseFromString(twiml, 'text/xml').getElementsByTagName('Say').item(0)!.textContent;
    expect(said).toBe(text);
  });
});
