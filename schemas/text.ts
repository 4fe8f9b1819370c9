// Strings checked the way JSON Schema (and so the published contract) defines them: lengths in Unicode code points and
// patterns with the u flag. TypeBox's own string check counts UTF-16 units, so 21 emoji would be "longer than 40".
import { FormatRegistry, Kind, Type, TypeRegistry, type TUnsafe } from '@sinclair/typebox';
import type { ErrorCode } from '../src/errors.js';
import { isUuid } from '../src/domain/ids.js';

/** What PostgreSQL can store unchanged: no NUL, no UTF-16 surrogate without its partner (u flag: code points). */
export const STORABLE_TEXT = '^[^\\u0000\\ud800-\\udfff]*$';
export const STORABLE_TEXT_RULE = 'must not contain NUL characters or unpaired surrogates';

// WHATWG's input type=email rule with a dotted domain: one @, no spaces, domain labels of letters, digits and hyphens.
export const EMAIL_PATTERN = "^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$";
const EMAIL = new RegExp(EMAIL_PATTERN, 'u');
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

// TypeBox ships no string formats: register the ones our schemas use.
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', isUuid);
if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => EMAIL.test(v));
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));

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
const compiled = (pattern: string) => patterns.get(pattern) ?? patterns.set(pattern, new RegExp(pattern, 'u')).get(pattern)!;

export function codePoints(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/** The first rule the value breaks, in JSON Schema's terms; null when it is valid. */
export function textProblem(schema: TextOptions, value: unknown): TextProblem | null {
  if (typeof value !== 'string') return 'type';
  // Code points are never more than UTF-16 units: count them only when the units alone do not decide.
  if (schema.minLength !== undefined && (value.length < schema.minLength || codePoints(value) < schema.minLength)) return 'minLength';
  if (schema.maxLength !== undefined && value.length > schema.maxLength && codePoints(value) > schema.maxLength) return 'maxLength';
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
