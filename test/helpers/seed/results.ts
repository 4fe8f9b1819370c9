// Voice-agent runtime results written straight to the database: the state the runtime's POST
// /agent-runtime/v1/calls/{id}/result leaves (a call_results row, and the call's outcome label copied to calls.outcome),
// for the pages and commands that show results, while the route that writes them is built elsewhere.
import { createHash } from 'node:crypto';
import type { Prisma, PrismaClient } from '../../../src/generated/prisma/client.js';
import type { CallResultData } from '../../../schemas/agent-runtime.js';

/**
 * A result as the runtime may post it: every field optional, as ResultBody; `dataJson`, the data as JSON text, for
 * data whose key order a JavaScript object would not keep (integer-like keys).
 */
export type SeedResult = Partial<Omit<CallResultData, 'received_at'>> & { received_at?: string; dataJson?: string };

/**
 * Makes the state the runtime's POST of `result` for `callId` would: call_results holds the published result (each
 * field present, null when not given, with received_at) as JSON text, key order kept, and calls.outcome its label
 * (null when it has none). `inEvent`: whether the terminal event carried it. A second call replaces the first.
 */
export async function forceResult(
  prisma: PrismaClient,
  callId: string,
  result: SeedResult,
  options: { inEvent?: boolean; attempt?: number; receivedAt?: Date } = {},
): Promise<CallResultData> {
  const receivedAt = options.receivedAt ?? (result.received_at ? new Date(result.received_at) : new Date());
  const published: CallResultData = {
    outcome: result.outcome ?? null,
    summary: result.summary ?? null,
    data: result.data ?? null,
    transcript: result.transcript ?? null,
    transcript_url: result.transcript_url ?? null,
    recording_url: result.recording_url ?? null,
    opt_out: result.opt_out ?? false,
    received_at: receivedAt.toISOString(),
  };
  // The data's own text where given: `"data":null` cannot occur inside a JSON string (its quotes are escaped there).
  const body = result.dataJson
    ? JSON.stringify({ ...published, data: null }).replace('"data":null', `"data":${result.dataJson}`)
    : JSON.stringify(published);
  const digest = createHash('sha256').update(body).digest('hex');
  await prisma.$transaction([
    prisma.$executeRaw`
      INSERT INTO call_results (call_id, attempt, body, digest, in_event, received_at)
      VALUES (${callId}::uuid, ${options.attempt ?? 1}, ${body}::json, ${digest}, ${options.inEvent ?? false}, ${receivedAt})
      ON CONFLICT (call_id) DO UPDATE SET attempt = excluded.attempt, body = excluded.body, digest = excluded.digest,
        in_event = excluded.in_event, received_at = excluded.received_at`,
    prisma.$executeRaw`UPDATE calls SET outcome = ${published.outcome} WHERE id = ${callId}::uuid`,
  ]);
  return JSON.parse(body) as CallResultData;
}

/**
 * A stored result's body replaced by `body` as given (a row written by hand: shapes and links the runtime's POST would
 * refuse), for what the pages make of it.
 */
export async function forceResultBody(
  prisma: PrismaClient,
  callId: string,
  body: Prisma.InputJsonValue,
): Promise<void> {
  await prisma.callResult.update({ where: { callId }, data: { body } });
}

/** A call's result removed, as before its runtime posted one. */
export async function removeResult(prisma: PrismaClient, callId: string): Promise<void> {
  await prisma.callResult.deleteMany({ where: { callId } });
}
