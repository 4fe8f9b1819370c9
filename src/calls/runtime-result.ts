// What a runtime's result does to a call (PRODUCT.md, "The agent on the line"), planned without the database: the
// result as published, and under the call's lock whether it is stored, carried by the terminal event, the same as
// before, or refused because the event already went without it.
//
// - Before the call ends: stored (a different one replaces it); the terminal event, written under the same lock, will
//   carry it and go at once.
// - After the call ended, while its terminal event waits (AGENT_RESULT_WAIT_SECONDS): stored, written into the waiting
//   event, which is then due at once. An account without an endpoint has no event; within the wait it is the same.
// - Later: stored if it is the first (shown, "late"; no second event), refused (409) if another is stored.
// - The same body again: nothing changes, at any time.
import { createHash } from 'node:crypto';
import type { ResultBody } from '../../schemas/agent-runtime.js';
import { CONTEXT_TOKEN_GRACE_MINUTES } from '../../schemas/agent-runtime.js';
import { isTerminal } from '../domain/call-lifecycle.js';
import { RawJson, stringifyWithRaw } from '../domain/raw-json.js';
import type { Transition } from '../domain/call-lifecycle.js';
import type { CallForResult, CallRow, LockedCall, ResultWrite } from '../storage/index.js';

/** A result as posted: the body, and its `data` member's text as the runtime wrote it (its key order kept). */
export interface PostedResult {
  body: ResultBody;
  dataJson: string | null;
}

/** How a post ended: stored (and whether it came after the event went), the same as stored, refused, or no such call. */
export type ResultVerdict =
  | { kind: 'stored'; late: boolean; optOut: boolean }
  | { kind: 'unchanged'; optOut: boolean }
  | { kind: 'conflict' }
  | { kind: 'invalid' };

/** The result's fields in the published order (schemas/agent-runtime.ts, CallResultData), data as written. */
function fields(posted: PostedResult) {
  const { body } = posted;
  return {
    outcome: body.outcome ?? null,
    summary: body.summary ?? null,
    data: posted.dataJson === null ? null : new RawJson(posted.dataJson),
    transcript: body.transcript ?? null,
    transcript_url: body.transcript_url ?? null,
    recording_url: body.recording_url ?? null,
    opt_out: body.opt_out ?? false,
  };
}

/** SHA-256 of the result without its arrival time: the same body posted twice has the same digest. */
export function resultDigest(posted: PostedResult): string {
  return createHash('sha256')
    .update(stringifyWithRaw(fields(posted)))
    .digest('hex');
}

/** The result as every event and page publish it (CallResultData), as JSON text. */
export function publishedResult(posted: PostedResult, receivedAt: Date): string {
  return stringifyWithRaw({ ...fields(posted), received_at: receivedAt.toISOString() });
}

/**
 * The terminal event's body with the result in place of its `result: null`: data's member before `recipient_region`
 * (CallData's order). The last such text is data's own: metadata, the only free-form JSON, comes earlier, and the
 * members after it (recipient_region, consent, compliance) hold no `result` key.
 */
export function eventWithResult(payload: string, result: string): string {
  const empty = ',"result":null,"recipient_region":';
  const at = payload.lastIndexOf(empty);
  if (at === -1) throw new Error('a terminal event body without result: null before recipient_region in its data');
  return `${payload.slice(0, at)},"result":${result},"recipient_region":${payload.slice(at + empty.length)}`;
}

/** Whether the token's attempt still may speak for the call: the call's current attempt, ended at most 15 minutes ago. */
export function tokenStillValid(
  call: { attempt: number; endedAt: Date | null; status: string },
  attempt: number,
  now: Date,
): boolean {
  if (call.attempt !== attempt || call.status === 'initiated') return false;
  return call.endedAt === null || now.getTime() <= call.endedAt.getTime() + CONTEXT_TOKEN_GRACE_MINUTES * 60_000;
}

export function planResult(
  call: CallForResult | null,
  input: { attempt: number; posted: PostedResult; now: Date; waitMs: number },
): { write: ResultWrite | null; result: ResultVerdict } {
  const { attempt, posted, now } = input;
  if (!call || !tokenStillValid(call, attempt, now)) return { write: null, result: { kind: 'invalid' } };
  const digest = resultDigest(posted);
  const optOut = posted.body.opt_out === true;
  if (call.storedDigest === digest && call.storedAttempt === attempt)
    return { write: null, result: { kind: 'unchanged', optOut } };
  const body = publishedResult(posted, now);
  const write = (inEvent: boolean, event: ResultWrite['event'] = null): ResultWrite => ({
    attempt,
    body,
    digest,
    outcome: posted.body.outcome ?? null,
    inEvent,
    receivedAt: now,
    event,
  });
  if (!isTerminal(call.status)) return { write: write(true), result: { kind: 'stored', late: false, optOut } };
  if (call.waiting) {
    const event = { ...call.waiting, payload: eventWithResult(call.waiting.payload, body), dueAt: now };
    return { write: write(true, event), result: { kind: 'stored', late: false, optOut } };
  }
  // No endpoint, so no event: within the wait it is as if the event had waited.
  const withinWait =
    call.terminalDeliveries === 0 &&
    call.endedAt !== null &&
    call.answeredAt !== null &&
    now.getTime() < call.endedAt.getTime() + input.waitMs;
  if (withinWait) return { write: write(true), result: { kind: 'stored', late: false, optOut } };
  if (call.storedDigest !== null && call.storedAttempt === attempt)
    return { write: null, result: { kind: 'conflict' } };
  return { write: write(false), result: { kind: 'stored', late: true, optOut } };
}

/**
 * Whether the terminal event `step` sends waits for the runtime's result (src/calls/transition.ts): the attempt was
 * answered (a runtime had the call), no result is in yet, and the transition's context waits at all.
 */
export function awaitsResult(call: CallRow, step: Transition, waitMs: number | undefined): boolean {
  const terminal = step.to === 'completed' || step.to === 'failed';
  return terminal && (waitMs ?? 0) > 0 && call.answeredAt !== null && typeof (call as LockedCall).result !== 'string';
}
