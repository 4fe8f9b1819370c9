// Request validation from TypeBox schemas, with messages that name the field and say what is wrong.
import type { FastifySchemaCompiler } from 'fastify';
import { Kind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type ValueError } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import type { ErrorCode } from './error-codes.js';
import {
  DATE_TIME_RULE,
  NAME_TEXT,
  NAME_TEXT_RULE,
  STORABLE_TEXT,
  STORABLE_TEXT_RULE,
  textProblem,
  type TextOptions,
} from './text.js';

export interface FieldError {
  instancePath: string;
  message?: string | undefined;
  params?: { code?: ErrorCode } & Record<string, unknown>;
}

function fieldName(path: string, part: string | undefined): string {
  const segments = path
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (segments.length === 0) return part === 'body' || part === undefined ? 'Request body' : part;
  return segments.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

/** One sentence for the first problem, in words an integrator understands. */
function sentence(error: ValueError): string {
  const schema = error.schema as TSchema & Record<string, unknown>;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ObjectAdditionalProperties:
      return typeof schema.keyErrorMessage === 'string' ? schema.keyErrorMessage : 'is not a known field';
    case ValueErrorType.String:
      return 'must be a string';
    case ValueErrorType.Number:
    case ValueErrorType.Integer:
      return 'must be a number';
    case ValueErrorType.Boolean:
      return 'must be a boolean';
    case ValueErrorType.Object:
      return 'must be a JSON object';
    case ValueErrorType.StringMaxLength:
      return `must be at most ${schema.maxLength} characters`;
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`;
    case ValueErrorType.ObjectMaxProperties:
      return `must have at most ${schema.maxProperties} keys`;
    case ValueErrorType.StringFormat:
      return formatSentence(schema.format as string | undefined);
    case ValueErrorType.StringPattern:
      return `must match ${schema.pattern}`;
    case ValueErrorType.Union:
      if (typeof error.value === 'string' && UNSTORABLE.test(error.value)) return STORABLE_TEXT_RULE;
      return typeof schema.description === 'string'
        ? `must be ${schema.description.replace(/\.$/, '')}`
        : 'has an unsupported type';
    case ValueErrorType.Kind:
      if (schema[Kind] === 'Text') return textSentence(schema, error.value);
      return 'is invalid';
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

function formatSentence(format: string | undefined): string {
  switch (format) {
    case 'uuid':
      return 'must be a UUID';
    case 'email':
      return 'must be a valid email address';
    case 'date-time':
      return DATE_TIME_RULE;
    default:
      return `must be a valid ${format}`;
  }
}

function textSentence(schema: TextOptions, value: unknown): string {
  switch (textProblem(schema, value)) {
    case 'type':
      return 'must be a string';
    case 'minLength':
      return schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters`;
    case 'maxLength':
      return `must be at most ${schema.maxLength} characters`;
    case 'pattern':
      if (schema.pattern === STORABLE_TEXT) return STORABLE_TEXT_RULE;
      if (schema.pattern === NAME_TEXT) return NAME_TEXT_RULE;
      return schema.format ? formatSentence(schema.format) : `must match ${schema.pattern}`;
    default:
      return formatSentence(schema.format);
  }
}

/** The error table's code a failed rule answers with, when its schema names one (a wrong type is not one of them). */
function codeOf(error: ValueError, httpPart: string | undefined): ErrorCode | undefined {
  const schema = error.schema as TextOptions & TSchema;
  if (error.type === ValueErrorType.Kind && schema.errorCode && textProblem(schema, error.value) !== 'type')
    return schema.errorCode;
  // The body is always one JSON object: anything else at the top is the same answer as an empty body.
  if (httpPart === 'body' && error.path === '' && error.type === ValueErrorType.Object) return 'BODY_NOT_OBJECT';
  return undefined;
}

/** The first problem, named at the right place: a record's bad key is reported at the record. */
function firstProblem(first: ValueError | undefined): { path: string; error: ValueError } | null {
  if (!first) return null;
  const schema = first.schema as { properties?: object; keyErrorMessage?: string };
  // A record's bad key is reported at the key's own path: name the record instead ("metadata keys must be ...").
  if (first.type === ValueErrorType.ObjectAdditionalProperties && schema.keyErrorMessage) {
    return { path: first.path.split('/').slice(0, -1).join('/'), error: first };
  }
  return { path: first.path, error: first };
}

// NUL and unpaired UTF-16 surrogates cannot be stored as PostgreSQL text or jsonb (or would be silently replaced), nor
// sent to it as a query's text: refuse them like any other invalid value, naming the field. The schema states it
// (STORABLE_TEXT) for free text; this walk also covers metadata keys, which TypeBox checks with its own regex.
// eslint-disable-next-line no-control-regex -- NUL is what this refuses
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function unstorable(value: unknown, path: string): string | null {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, inner] of Object.entries(value)) {
    const here = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (UNSTORABLE.test(key)) return path;
    const found = unstorable(inner, here);
    if (found !== null) return found;
  }
  return null;
}

export function describeValidationError(errors: FieldError[], part?: string): string {
  const first = errors[0];
  if (!first) return 'Invalid request';
  return `${fieldName(first.instancePath, part)} ${first.message ?? 'is invalid'}`;
}

/** The error table's code for a validation failure that has one (its exact message then replaces the field's). */
export function validationErrorCode(errors: FieldError[]): ErrorCode | undefined {
  return errors[0]?.params?.code;
}

/** Like @fastify/type-provider-typebox's compiler, but keeps the error kind so messages can be specific. */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  return (input: unknown) => {
    const value = httpPart === 'body' ? input : Value.Convert(schema, input);
    if (check.Check(value)) {
      // Headers cannot carry NUL (the HTTP parser refuses it); a query string or a path can (%00), and would reach
      // PostgreSQL as text it refuses (a 500) from any page that searches with it.
      const bad = httpPart === 'headers' ? null : unstorable(value, '');
      if (bad === null) return { value };
      return { error: [{ instancePath: bad, message: STORABLE_TEXT_RULE }] as never };
    }
    // The first error only, computed no further: listing them all checked every rule of every field first.
    const problem = firstProblem(check.Errors(value).First());
    const code = problem ? codeOf(problem.error, httpPart) : undefined;
    const error: FieldError = !problem
      ? { instancePath: '', message: 'is invalid' }
      : { instancePath: problem.path, message: sentence(problem.error), ...(code ? { params: { code } } : {}) };
    return { error: [error] as never };
  };
};
