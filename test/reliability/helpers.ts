// Shared by the reliability files: limits high enough not to mask what a test looks at, row counts, the response
// envelope check, raw HTTP over a socket, and small statistics.
import net from 'node:net';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { isUuid } from '../../schemas/uuid.js';

/** Rate, auth-failure and queue limits far above anything a test sends: a 429 would hide what is being tested. */
export const UNLIMITED = {
  RATE_LIMIT_PER_MINUTE: '1000000000',
  AUTH_FAILURES_PER_MINUTE: '1000000000',
  MAX_QUEUED_CALLS: '1000000000',
} as const;

export interface RowCounts {
  calls: number;
  call_events: number;
  idempotency_records: number;
  webhook_deliveries: number;
}

/** The tables a trigger may write, counted in one statement (one snapshot). */
export async function countRows(prisma: PrismaClient): Promise<RowCounts> {
  const [row] = await prisma.$queryRaw<RowCounts[]>`
    SELECT (SELECT count(*) FROM calls)::int AS calls,
           (SELECT count(*) FROM call_events)::int AS call_events,
           (SELECT count(*) FROM idempotency_records)::int AS idempotency_records,
           (SELECT count(*) FROM webhook_deliveries)::int AS webhook_deliveries`;
  return row!;
}

export function rowDelta(before: RowCounts, after: RowCounts): RowCounts {
  return {
    calls: after.calls - before.calls,
    call_events: after.call_events - before.call_events,
    idempotency_records: after.idempotency_records - before.idempotency_records,
    webhook_deliveries: after.webhook_deliveries - before.webhook_deliveries,
  };
}

export type Envelope = { success: true; call_id: string; status: 'initiated' } | { success: false; error: string };

/**
 * The contract's only two response bodies: the success shape on 200, `{ success: false, error }` (exactly those two
 * keys, a non-empty message) otherwise; always JSON. Returns a problem description, or null when the response is fine.
 */
export function envelopeProblem(status: number, contentType: string | undefined, body: string): string | null {
  if (!/^application\/json\b/i.test(contentType ?? ''))
    return `content-type ${JSON.stringify(contentType)} is not JSON`;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return 'body is not JSON';
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return 'body is not a JSON object';
  const keys = Object.keys(json).sort().join(',');
  const value = json as Record<string, unknown>;
  if (status === 200) {
    if (
      keys !== 'call_id,status,success' ||
      value.success !== true ||
      value.status !== 'initiated' ||
      !isUuid(String(value.call_id))
    ) {
      return 'a 200 body is not exactly { success: true, call_id: <uuid>, status: "initiated" }';
    }
    return null;
  }
  if (status < 400) return `unexpected status ${status}`;
  if (
    keys !== 'error,success' ||
    value.success !== false ||
    typeof value.error !== 'string' ||
    value.error.length === 0
  ) {
    return 'an error body is not exactly { success: false, error: <message> }';
  }
  // Errors never carry a stack or SQL (README "Errors").
  if (/\n\s+at |prisma|SELECT |INSERT |violates|syntax error/i.test(value.error))
    return 'an error message leaks internals';
  return null;
}

export function expectEnvelope(res: LightMyRequestResponse): Envelope {
  const problem = envelopeProblem(res.statusCode, res.headers['content-type'] as string | undefined, res.body);
  expect(problem, `${res.statusCode} ${res.body.slice(0, 300)}`).toBeNull();
  return res.json<Envelope>();
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The connection ended without any response bytes. */
  empty: boolean;
}

/**
 * Writes `request` byte for byte to a plain-HTTP listener and reads until the server closes (requests should say
 * `Connection: close`); parses the first response. The one way to send duplicated or oddly cased header names,
 * which inject() and fetch() normalise away.
 */
export function rawHttp(port: number, request: string | Buffer, timeoutMs = 5_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms to ${JSON.stringify(request.toString().slice(0, 200))}`));
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined); // a reset after the answer is fine: what was read is parsed below
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) return resolve({ status: 0, headers: {}, body: '', empty: true });
      const split = text.indexOf('\r\n\r\n');
      const head = split === -1 ? text : text.slice(0, split);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = split === -1 ? '' : text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      else if (headers['content-length'] !== undefined) body = body.slice(0, Number(headers['content-length']));
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body, empty: false });
    });
    socket.write(request);
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol === -1) return out;
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A string shortened for an assertion message, with every odd character visible as an escape. */
export function show(value: unknown, max = 400): string {
  const text =
    typeof value === 'string'
      ? JSON.stringify(value)
      : JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  const escaped = (text ?? String(value)).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return escaped.length > max ? `${escaped.slice(0, max)}... (${escaped.length} chars)` : escaped;
}
