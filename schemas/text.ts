// Strings checked the way JSON Schema (and so the published contract) defines them: lengths in Unicode code points and
// patterns with the u flag. TypeBox's own string check counts UTF-16 units, so 21 emoji would be "longer than 40".
import { FormatRegistry, Kind, Type, TypeRegistry, type TUnsafe } from '@sinclair/typebox';
import type { ErrorCode } from './error-codes.js';
import { UUID } from './uuid.js';

/** What PostgreSQL can store unchanged: no NUL, no UTF-16 surrogate without its partner (u flag: code points). */
export const STORABLE_TEXT = '^[^\\u0000\\ud800-\\udfff]*$';
export const STORABLE_TEXT_RULE = 'must not contain NUL characters or unpaired surrogates';

/**
 * The trigger's name: what PostgreSQL stores unchanged and no control character but tab, LF and CR (C0, DEL and C1
 * would be dropped from the TwiML while the webhook kept them: the agent would hear another name than was sent).
 */
export const NAME_TEXT = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\ud800-\\udfff]*$';
export const NAME_TEXT_RULE =
  'must not contain control characters other than tab, line feed and carriage return, nor unpaired surrogates';

/**
 * One address rule for the schema and the server: a dot-atom local part (RFC 5322 atext, dots only between atoms, no
 * quoted strings or comments) of at most 64 characters, "@", then a domain of LDH labels (1 to 63 letters, digits and
 * hyphens, no hyphen at either end) with at least one dot, the last label (the TLD) at least two characters and starting with a letter. ASCII only.
 */
export const EMAIL_PATTERN =
  "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*" +
  '@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z][A-Za-z0-9-]{0,61}[A-Za-z0-9]$';
export const EMAIL_RULE =
  "an address local@domain: the local part (at most 64 characters) is letters, digits and !#$%&'*+/=?^_`{|}~- " +
  'in dot-separated runs (no leading, trailing or doubled dot, no quotes); the domain is dot-separated labels of letters, digits and ' +
  'hyphens (1 to 63, no hyphen at either end) ending in a top-level domain of at least two characters that starts with a letter; ASCII only';
const EMAIL = new RegExp(EMAIL_PATTERN, 'u');
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 date-time with its offset (Z or ±HH:MM), as the server reads it: upper-case T and Z, no leap second.
 * The format (date-time) adds what a pattern cannot say: the day exists in its month.
 */
export const DATE_TIME_PATTERN =
  '^\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])T(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$';

/** How a refused date-time is described (schemas/validation.ts): the end of a sentence that starts with the field. */
export const DATE_TIME_RULE = 'must be an RFC 3339 date-time with its UTC offset, such as 2026-12-01T09:30:00-05:00';

/** RFC 3339's date-time with its offset, the day one its month has: Date.parse alone reads 02-30 as March 2. */
function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m || Number.isNaN(Date.parse(value))) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day >= 1 && day <= days && hour <= 23 && minute <= 59 && second <= 59;
}

// TypeBox ships no string formats: register the ones our schemas use.
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID.test(v));
if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => EMAIL.test(v));
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime);

/**
 * What shows nothing on a page or a terminal: white space, control and format characters, default-ignorable code
 * points (zero-width space and joiners, the BOM, variation selectors, Hangul fillers) and the Braille blank.
 */
const INVISIBLE = /[\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]/gu;
/** Embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069): they reorder what is shown around them. */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/u;
/** Control characters (line breaks and tabs included: a name is one line) and UTF-16 halves without their partner. */
const UNREADABLE = /[\p{Cc}\p{Cs}]/u;

/**
 * Why a name people give to a client, an agent, an agency or a user is not one others can read, as the end of a
 * sentence about the name ("A client's name " + problem), or null. Empty (after trimming) is the caller's own
 * message. Checked by src/admin, so the dashboard and callctl refuse the same names with the same words.
 */
export function readableNameProblem(name: string): string | null {
  if (name.replace(INVISIBLE, '') === '' && name !== '')
    return 'must have a visible character (it has only spaces or invisible characters)';
  if (UNREADABLE.test(name)) return 'must not contain control characters such as line breaks or tabs';
  if (BIDI_CONTROLS.test(name))
    return 'must not contain characters that change the direction of the text (U+202A to U+202E, U+2066 to U+2069)';
  return null;
}

export interface TextOptions {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  description?: string;
  examples?: string[];
  /** The error table's code for any broken rule but the type (its message replaces the field-naming one). */
  errorCode?: ErrorCode;
}

export type TextProblem = 'type' | 'minLength' | 'maxLength' | 'pattern' | 'format';

const patterns = new Map<string, RegExp>();
const compiled = (pattern: string) =>
  patterns.get(pattern) ?? patterns.set(pattern, new RegExp(pattern, 'u')).get(pattern)!;

export function codePoints(value: string): number {
  let count = 0;
  const characters = value[Symbol.iterator]();
  while (!characters.next().done) count++;
  return count;
}

/** The first rule the value breaks, in JSON Schema's terms; null when it is valid. */
export function textProblem(schema: TextOptions, value: unknown): TextProblem | null {
  if (typeof value !== 'string') return 'type';
  // Code points are never more than UTF-16 units: count them only when the units alone do not decide.
  if (schema.minLength !== undefined && (value.length < schema.minLength || codePoints(value) < schema.minLength))
    return 'minLength';
  if (schema.maxLength !== undefined && value.length > schema.maxLength && codePoints(value) > schema.maxLength)
    return 'maxLength';
  if (schema.pattern !== undefined && !compiled(schema.pattern).test(value)) return 'pattern';
  if (schema.format !== undefined && !FormatRegistry.Get(schema.format)?.(value)) return 'format';
  return null;
}

TypeRegistry.Set<TextOptions>('Text', (schema, value) => textProblem(schema, value) === null);

/** A string schema: the published keywords are exactly the ones checked. */
export function Text(options: TextOptions = {}): TUnsafe<string> {
  return Type.Unsafe<string>({ ...options, type: 'string', [Kind]: 'Text' });
}

/** Free text a person typed: any character PostgreSQL stores unchanged. */
export function FreeText(options: Omit<TextOptions, 'pattern'> = {}): TUnsafe<string> {
  return Text({ ...options, pattern: STORABLE_TEXT });
}
