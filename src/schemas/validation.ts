// Request validation from TypeBox schemas, with messages that name the field and say what is wrong.
import type { FastifySchemaCompiler } from 'fastify';
import { type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type ValueError } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { FormatRegistry } from '@sinclair/typebox';
import { isUuid } from '../domain/ids.js';
import { Value } from '@sinclair/typebox/value';

// TypeBox ships no string formats: register the ones our schemas use.
// A pragmatic address check (WHATWG's input type=email rule): one @, no spaces, dotted domain labels.
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', isUuid);
if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => EMAIL.test(v));
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v)));

export interface FieldError { instancePath: string; message?: string | undefined; params?: Record<string, unknown> }

function fieldName(path: string, part: string | undefined): string {
  const segments = path.split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (segments.length === 0) return part === 'body' || part === undefined ? 'request body' : part;
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
      return schema.format === 'uuid' ? 'must be a UUID' : schema.format === 'email' ? 'must be a valid email address' : `must be a valid ${schema.format}`;
    case ValueErrorType.StringPattern:
      return `must match ${schema.pattern}`;
    case ValueErrorType.Union:
      return typeof schema.description === 'string' ? `must be ${schema.description.replace(/\.$/, '')}` : 'has an unsupported type';
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

/** The first problem, named at the right place: a record's bad key is reported at the record. */
function firstProblem(errors: ValueError[]): { path: string; error: ValueError } | null {
  const first = errors[0];
  if (!first) return null;
  const schema = first.schema as { properties?: object; keyErrorMessage?: string };
  // A record's bad key is reported at the key's own path: name the record instead ("metadata keys must be ...").
  if (first.type === ValueErrorType.ObjectAdditionalProperties && schema.keyErrorMessage) {
    return { path: first.path.split('/').slice(0, -1).join('/'), error: first };
  }
  return { path: first.path, error: first };
}

// NUL and unpaired UTF-16 surrogates cannot be stored as PostgreSQL text or jsonb (or would be silently replaced):
// refuse them like any other invalid value, naming the field.
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
  if (first.params?.verbatim) return first.message ?? 'Invalid request';
  return `${fieldName(first.instancePath, part)} ${first.message ?? 'is invalid'}`;
}

/** Like @fastify/type-provider-typebox's compiler, but keeps the error kind so messages can be specific. */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  return (input: unknown) => {
    const value = httpPart === 'body' ? input : Value.Convert(schema, input);
    if (check.Check(value)) {
      const bad = httpPart === 'body' ? unstorable(value, '') : null;
      if (bad === null) return { value };
      return { error: [{ instancePath: bad, message: 'must not contain NUL characters or unpaired surrogates' }] as never };
    }
    const problem = firstProblem([...check.Errors(value)].slice(0, 10));
    const own = problem && (problem.error.schema as Record<string, unknown>).errorMessage;
    // A schema may carry the contract's exact wording for a failed pattern (the E.164 rule's message).
    const error: FieldError = !problem
      ? { instancePath: '', message: 'is invalid' }
      : typeof own === 'string' && (problem.error.type === ValueErrorType.StringPattern || problem.error.type === ValueErrorType.StringFormat)
        ? { instancePath: problem.path, message: own, params: { verbatim: true } }
        : { instancePath: problem.path, message: sentence(problem.error) };
    return { error: [error] as never };
  };
};
