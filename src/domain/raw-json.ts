// JSON text kept as written: a member cut out of a request body, an object's entries in their written order, and
// serialisation with such text spliced in. A JavaScript object moves integer-like keys ("2", "10") before the others,
// so a value that must pass through unchanged (a call's metadata) never round-trips through one.
import { randomBytes } from 'node:crypto';

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

function skipWhitespace(text: string, at: number): number {
  while (at < text.length && WHITESPACE.has(text[at]!)) at++;
  return at;
}

/** The end (exclusive) of the string token starting at `at` (a quote). */
function stringEnd(text: string, at: number): number {
  let i = at + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  throw new SyntaxError('unterminated string');
}

/** The end (exclusive) of the value starting at `at`. The text is valid JSON (it was parsed before). */
function valueEnd(text: string, at: number): number {
  const c = text[at];
  if (c === '"') return stringEnd(text, at);
  if (c === '{' || c === '[') {
    let depth = 0;
    let i = at;
    while (i < text.length) {
      const d = text[i];
      if (d === '"') {
        i = stringEnd(text, i);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    throw new SyntaxError('unterminated container');
  }
  let i = at;
  while (i < text.length && !WHITESPACE.has(text[i]!) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++;
  return i;
}

/** The text without insignificant whitespace (strings untouched). */
export function minify(text: string): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      i = stringEnd(text, i);
    } else if (WHITESPACE.has(c)) {
      out += text.slice(from, i);
      i = skipWhitespace(text, i);
      from = i;
    } else {
      i++;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Each member of a JSON object text, in written order: the decoded key and the value's text (as written). */
export function objectEntries(text: string): [key: string, value: string][] {
  const entries: [string, string][] = [];
  let i = skipWhitespace(text, 0);
  if (text[i] !== '{') throw new SyntaxError('not a JSON object');
  i = skipWhitespace(text, i + 1);
  if (text[i] === '}') return entries;
  for (;;) {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWhitespace(text, keyEnd);
    i = skipWhitespace(text, i + 1); // past ':'
    const end = valueEnd(text, i);
    entries.push([key, text.slice(i, end)]);
    i = skipWhitespace(text, end);
    if (text[i] === '}') return entries;
    i = skipWhitespace(text, i + 1); // past ','
  }
}

/**
 * The value of the top-level member `name` of a JSON object text, minified, or undefined when there is none. When a
 * name repeats, the last one counts, as in JSON.parse.
 */
export function memberText(text: string, name: string): string | undefined {
  let found: string | undefined;
  for (const [key, value] of objectEntries(text)) if (key === name) found = value;
  return found === undefined ? undefined : minify(found);
}

/** Whether a JSON object text names a key twice (JSON.parse would keep only the last). */
export function hasRepeatedKey(text: string): boolean {
  const keys = objectEntries(text).map(([key]) => key);
  return new Set(keys).size !== keys.length;
}

/** JSON text to be written as is by stringifyWithRaw. */
export class RawJson {
  constructor(readonly text: string) {}
}

// A per-process nonce: no string a client sends can name a placeholder.
const NONCE = randomBytes(9).toString('base64url');
const PLACEHOLDER = new RegExp(`"\\\\u0000${NONCE}:(\\d+)"`, 'g');

/** JSON.stringify, except that each RawJson in `value` is written as its text. */
export function stringifyWithRaw(value: unknown): string {
  const raws: string[] = [];
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (!(v instanceof RawJson)) return v;
    raws.push(v.text);
    return `\u0000${NONCE}:${raws.length - 1}`;
  });
  return raws.length === 0 ? json : json.replace(PLACEHOLDER, (_m, index: string) => raws[Number(index)]!);
}
