// A stored call as its public view (schemas/call.ts): the `data` of every webhook event and what callctl shows.
// The view is derived from the CallData schema: its properties in their order, each the row's field of the same name
// in camelCase (a Date as its ISO string), except the few written out in SPECIAL. A new column that is published as
// stored therefore needs no edit here: its property in CallData and its field in the row are enough.
import type { TObject, TSchema } from '@sinclair/typebox';
import { CallData, type AttemptOutcomeData } from '../../schemas/call.js';
import { ComplianceRecord, Consent, type ComplianceRecordData, type ConsentData } from '../../schemas/compliance.js';
import type { CallResultData } from '../../schemas/agent-runtime.js';
import type { CallRow as Call } from '../storage/index.js';

/**
 * The attempts dialled so far: the finished ones, and the current one once it is dialling (or ended after a dial).
 * A call that ended before its first dial (expired, canceled, do_not_call while waiting) counts 0. `attemptsEnded`:
 * how many entries attempt_outcomes holds.
 */
export function attemptsDialled(
  call: Pick<Call, 'attempt' | 'startedAt' | 'status'> & { attemptsEnded: number },
): number {
  const current = call.status !== 'initiated' && call.startedAt !== null && call.attemptsEnded < call.attempt ? 1 : 0;
  return call.attemptsEnded + current;
}

/**
 * The attempt being made or last made: the current one once it is dialled, else the last that ended; 0 when none was
 * dialled (a call canceled, expired or refused by do-not-call while it waited for its first dial). A call waiting
 * for a retry, or ended while it waited, names the attempt it last dialled, never one that was not made.
 */
export function attemptMade(
  call: Pick<Call, 'attempt' | 'startedAt' | 'status'>,
  outcomes: AttemptOutcomeData[],
): number {
  const dialled = call.status !== 'initiated' && call.startedAt !== null && outcomes.length < call.attempt;
  return dialled ? call.attempt : (outcomes.at(-1)?.attempt ?? 0);
}

/** How a property is made: from the row and its attempt outcomes (read once per call; several properties need them). */
type Read = (call: Call, outcomes: AttemptOutcomeData[]) => unknown;

/** The properties that are not a copy of the row's field of the same name, and how each is made. */
const SPECIAL = {
  call_id: (call: Call) => call.id,
  // The parsed metadata, or {} for none. Callers holding the stored text (src/calls/transition.ts, src/admin/calls.ts)
  // put it in this place as RawJson, so that the client's key order reaches the webhook body unchanged.
  metadata: (call: Call) => (call.metadata ?? {}) as CallData['metadata'],
  attempt: (call: Call, outcomes: AttemptOutcomeData[]) => attemptMade(call, outcomes),
  attempts: (call: Call, outcomes: AttemptOutcomeData[]) =>
    attemptsDialled({ ...call, attemptsEnded: outcomes.length }),
  attempt_outcomes: (_call: Call, outcomes: AttemptOutcomeData[]) => outcomes,
  result: (call: Call) => resultOf(call),
  consent: (call: Call) => (call.consent === null ? null : (inSchemaOrder(Consent, call.consent) as ConsentData)),
  compliance: (call: Call) => complianceOf(call),
} satisfies { [K in keyof CallData]?: (call: Call, outcomes: AttemptOutcomeData[]) => CallData[K] };

/**
 * A call row as some readers return it: with its runtime result (call_results.body, the published CallResult), as the
 * JSON text stored (the transition's locking read: RawJson keeps its data's key order) or parsed (Prisma's include).
 * Absent or null: no result.
 */
export type CallWithResult = Call & { result?: string | CallResultData | null };

/** The call's result as published, or null. */
export function resultOf(call: Call): CallResultData | null {
  const stored = (call as CallWithResult).result;
  if (stored === undefined || stored === null) return null;
  return typeof stored === 'string' ? (JSON.parse(stored) as CallResultData) : stored;
}

/**
 * A stored JSON value (jsonb: its keys come back sorted by length) with its objects' keys in the schema's order, and
 * only the schema's: the signed webhook body reads as the published shape, the same on every read.
 */
export function inSchemaOrder(schema: TSchema, value: unknown): unknown {
  if (Array.isArray(value))
    return schema.items ? value.map((item) => inSchemaOrder(schema.items as TSchema, item)) : value;
  if (value === null || typeof value !== 'object') return value;
  const shape = (schema.properties ? schema : (schema.anyOf as TSchema[] | undefined)?.find((s) => s.properties)) as
    TObject | undefined;
  if (!shape) return value;
  const stored = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(shape.properties)) {
    if (stored[key] !== undefined) out[key] = inSchemaOrder(inner, stored[key]);
  }
  return out;
}

/**
 * The decision record of the call's current attempt: the last stored (calls.compliance, oldest first) whose attempt is
 * the call's; null when there is none (rules off, or the attempt not checked yet).
 */
export function complianceOf(call: Call): ComplianceRecordData | null {
  const records = Array.isArray(call.compliance) ? (call.compliance as { attempt?: unknown }[]) : [];
  const current = records.findLast((record) => record?.attempt === call.attempt);
  return current === undefined ? null : (inSchemaOrder(ComplianceRecord, current) as ComplianceRecordData);
}

/** `attempt_outcomes` -> `attemptOutcomes`: the row's name for a property. */
const camelCase = (name: string) => name.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/** A row's field as published: a Date as its ISO string (`2026-11-23T15:00:00.000Z`), anything else as it is. */
function copy(field: string): Read {
  return (call) => {
    const value = (call as unknown as Record<string, unknown>)[field];
    return value instanceof Date ? value.toISOString() : value;
  };
}

/**
 * The mapper for `schema` (CallData, or a schema that extends it): one reader per property, in the schema's order,
 * computed once. The view's keys come out in that order, which the signed webhook bodies keep.
 */
export function viewFor(schema: TObject): (call: Call) => Record<string, unknown> {
  const special: Record<string, Read> = SPECIAL;
  const readers = Object.keys(schema.properties).map((key) => [key, special[key] ?? copy(camelCase(key))] as const);
  return (call) => {
    const outcomes = (Array.isArray(call.attemptOutcomes) ? call.attemptOutcomes : []) as AttemptOutcomeData[];
    const view: Record<string, unknown> = {};
    for (const [key, read] of readers) view[key] = read(call, outcomes);
    return view;
  };
}

type Plain = Exclude<keyof CallData, keyof typeof SPECIAL>;
type Published<T> = T extends Date ? string : T;
/**
 * The view's type as the derivation makes it. Returning it as CallData checks at compile time that every plain
 * property has a row field of its camelCase name whose published type the schema allows.
 */
type Derived = {
  [K in Plain]: CamelCase<K> extends keyof Call ? Published<Call[CamelCase<K>]> : { noRowField: CamelCase<K> };
} & { [K in keyof typeof SPECIAL]: ReturnType<(typeof SPECIAL)[K]> };

const view = viewFor(CallData);

/** A stored call as CallData: what webhook events carry as `data` (signed, so byte for byte) and callctl shows. */
export function callView(call: Call): CallData {
  const derived = view(call) as Derived;
  return derived;
}
