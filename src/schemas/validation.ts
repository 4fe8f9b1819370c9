// Request validation from TypeBox schemas, with messages that name the field and say what is wrong.
import type { FastifySchemaCompiler } from 'fastify';
import { type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type ValueError } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

export interface FieldError { instancePath: string; message?: string | undefined }

function fieldName(path: string, part: string | undefined): string {
  const segments = path.split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (segments.length === 0) return part === 'body' || part === undefined ? 'request body' : part;
  return segments.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

/** One sentence for the first problem, in words an integrator understands. */
function sentence(error: ValueError): string {
  const schema = error.schema as TSchema & Record<string, unknown>;
  // Schemas may carry their own wording for a failed pattern or format (e.g. the E.164 rule).
  if (typeof schema.errorMessage === 'string') return schema.errorMessage;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    case ValueErrorType.ObjectAdditionalProperties:
      return 'is not a known field';
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
      return `must be a valid ${schema.format}`;
    case ValueErrorType.StringPattern:
      return `must match ${schema.pattern}`;
    case ValueErrorType.Union:
      return typeof schema.description === 'string' ? `must be ${schema.description.replace(/\.$/, '')}` : 'has an unsupported type';
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

/** ObjectAdditionalProperties errors point at the object; name the offending key instead. */
function firstProblem(schema: TSchema, value: unknown, errors: ValueError[]): { path: string; error: ValueError } | null {
  const first = errors[0];
  if (!first) return null;
  if (first.type === ValueErrorType.ObjectAdditionalProperties && first.value && typeof first.value === 'object') {
    const known = new Set(Object.keys((first.schema as { properties?: object }).properties ?? {}));
    const extra = Object.keys(first.value).find((k) => !known.has(k));
    if (extra !== undefined) return { path: `${first.path}/${extra}`, error: first };
  }
  void schema;
  void value;
  return { path: first.path, error: first };
}

export function describeValidationError(errors: FieldError[], part?: string): string {
  const first = errors[0];
  if (!first) return 'Invalid request';
  return `${fieldName(first.instancePath, part)} ${first.message ?? 'is invalid'}`;
}

/** Like @fastify/type-provider-typebox's compiler, but keeps the error kind so messages can be specific. */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  return (input: unknown) => {
    const value = httpPart === 'body' ? input : Value.Convert(schema, input);
    if (check.Check(value)) return { value };
    const problem = firstProblem(schema, value, [...check.Errors(value)].slice(0, 10));
    const error: FieldError = problem
      ? { instancePath: problem.path, message: sentence(problem.error) }
      : { instancePath: '', message: 'is invalid' };
    return { error: [error] as never };
  };
};
