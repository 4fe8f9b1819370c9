// What a person is told when a dashboard form is refused: it does not validate (the schema states each field's
// rules; a page that words a refused field itself, in src/admin's words as callctl says them, finds every refused field
// with `refusals`, since the route's validation stops at the first), src/admin refuses it (AdminError), or the route
// does (FormProblem). The dashboard's error handler (plugins/dashboard/errors.ts) shows each on the route's form.
import type { TSchema } from '@sinclair/typebox';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';
import type { FastifyRequest, FastifySchemaValidationError } from 'fastify';

/** What a form that does not validate is told (a form the page never sends: edited, or from an old page). */
export const FORM_NOT_VALID = 'The form was not filled in as expected. Reload the page and try again.';

/** Problems of a form's fields in words, by the field's id on the page ("name", "w0-from"), each shown next to it. */
export type FieldProblems = Record<string, string>;

/**
 * A form the route refuses in its own words: shown on the form like an AdminError, with `status` (400 unless said)
 * and, for a form that words each field, the problem of each (`fields`).
 */
export class FormProblem extends Error {
  override name = 'FormProblem';
  constructor(
    message: string,
    readonly status = 400,
    readonly fields: FieldProblems = {},
  ) {
    super(message);
  }
}

/** Why a form was refused, as the route's `formFailure` (its config) gets it. */
export interface FormFailure {
  /** What to tell the person: the AdminError's or FormProblem's message, or FORM_NOT_VALID. */
  message: string;
  /** 400, or the FormProblem's own status. */
  status: number;
  /** The refusal itself: the AdminError (or a subclass a page words apart), the FormProblem or the validation error. */
  error: Error;
  /** The schema refused the request (its body, query or params): `request.validationError` says which field. */
  invalid: boolean;
  /** Who refused it: the route's schema, the route itself (a FormProblem), or src/admin (an AdminError). */
  by: 'schema' | 'route' | 'admin';
  /** The problem of each field the route worded (a FormProblem's `fields`); {} for any other refusal. */
  fields: FieldProblems;
}

/** The field the schema refused ("agent_id"), for a page that words that field's problem itself; else null. */
export function refusedField(request: FastifyRequest): string | null {
  const errors = request.validationError?.validation as FastifySchemaValidationError[] | undefined;
  const path = errors?.[0]?.instancePath ?? '';
  return path.startsWith('/') ? (path.slice(1).split('/')[0] ?? null) : null;
}

/** A field the schema refused by its pattern: its name, and for a repeated field the row (0 for a single value). */
export interface Refusal {
  field: string;
  row: number;
}

/** Errors that say a value is not of a union variant's type: that variant is not the one the value is meant for. */
const TYPE_ERRORS = new Set([ValueErrorType.String, ValueErrorType.Array, ValueErrorType.Object]);

/** The errors under a union's: those of the variant whose type the value has (a string, or a list of rows). */
function* leaves(error: ValueError): Generator<ValueError> {
  if (error.type !== ValueErrorType.Union) {
    yield error;
    return;
  }
  for (const variant of error.errors) {
    const inner = [...variant];
    if (inner.some((e) => e.path === error.path && TYPE_ERRORS.has(e.type))) continue;
    for (const e of inner) yield* leaves(e);
    return;
  }
  yield error;
}

/**
 * Every field (and row) of the request's `value` that `schema` refused by a pattern, in the schema's order; [] when it
 * validated; null when it broke another rule (a length, a choice, a missing or unknown field, unstorable text: a form
 * the page never sends), which the form words as FORM_NOT_VALID.
 */
export function refusals(request: FastifyRequest, schema: TSchema, value: unknown): Refusal[] | null {
  if (!request.validationError) return [];
  const errors = [...Value.Errors(schema, value)].flatMap((error) => [...leaves(error)]);
  if (errors.length === 0 || errors.some((e) => e.type !== ValueErrorType.StringPattern)) return null;
  return errors.map((e) => {
    const [, field = '', row = '0'] = e.path.split('/');
    return { field, row: Number(row) };
  });
}

/** The request's client IP for the audit log (X-Forwarded-For only when TRUST_PROXY says so). */
export function clientIp(request: FastifyRequest): string {
  return request.ip;
}
