// One HTTP attempt of a webhook: POST the frozen body with Standard Webhooks headers, no redirects, a hard timeout,
// and (unless private targets are allowed) agents that put every address connected to through the URL check's own
// address policy (guarded-agent.ts: DNS rebinding, and the same verdict as when the URL was saved).
// The answer's first 2 KB are kept for the delivery log; a long body is not read to its end.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { LookupFunction, Socket } from 'node:net';
import https from 'node:https';
import { webhookSigningKey } from '../domain/webhook-secret.js';
import { GuardedHttpAgent, GuardedHttpsAgent } from './guarded-agent.js';

export const WEBHOOK_TIMEOUT_MS = 15_000;
const USER_AGENT = 'outbound-call-trigger-webhooks/1';
/**
 * The longest an idle connection is kept (undici's and agentkeepalive's default). node:http closes an idle socket
 * 1 s before the receiver's `Keep-Alive: timeout=N` hint, but only when the hint is below the agent's `timeout`:
 * without one, sockets were kept until the receiver closed them, and the next event could be written as it did.
 */
export const IDLE_SOCKET_MS = 4_000;
/** The receiver's last `Keep-Alive` header per socket, read when the agent keeps the socket. */
const idleHints = new WeakMap<object, string>();

/**
 * Keeps an idle socket at most IDLE_SOCKET_MS, and never past 1 s before the receiver's `Keep-Alive: timeout=N`: the
 * agent destroys a free socket that times out. Through `keepSocketAlive`, which http.Agent documents as the method to
 * override for this; the agent's own `timeout` option does the same at a large cost in the delivery rate to one host
 * (docs/performance.md#idle-sockets-per-host).
 */
function idleNoLongerThanHinted(agent: http.Agent) {
  // @types/node declares it void; Node's agent keeps the socket only when it returns true.
  const keep = agent.keepSocketAlive.bind(agent) as unknown as (socket: Socket) => boolean;
  (agent as unknown as { keepSocketAlive: (socket: Socket) => boolean }).keepSocketAlive = (socket) => {
    if (!keep(socket)) return false;
    const hint = /timeout=(\d+)/i.exec(idleHints.get(socket) ?? '')?.[1];
    const idleMs = Math.min(IDLE_SOCKET_MS, hint === undefined ? IDLE_SOCKET_MS : Number(hint) * 1000 - 1000);
    if (idleMs <= 0) return false;
    socket.setTimeout(idleMs);
    return true;
  };
}

/** The bytes of a response body kept for the delivery log. */
export const RESPONSE_BODY_KEPT = 2048;
/**
 * A body is read past what is kept only so the connection can be reused, and only this far: past it (or when the
 * receiver announces a longer one), closing the connection costs less than reading on, and a receiver that streams
 * without end cannot hold the attempt until its timeout.
 */
export const RESPONSE_BODY_DRAINED = 64 * 1024;

/**
 * The kept bytes as text: a character the limit cut in two is left out whole (the text is a prefix of the body, never
 * a replacement character the receiver did not send), and NUL, which a PostgreSQL text cannot hold, is dropped.
 */
export function keptBodyText(bytes: Buffer, truncated: boolean): string {
  let end = bytes.length;
  if (truncated && end > 0) {
    let start = end - 1;
    while (start > 0 && end - start < 4 && (bytes[start]! & 0xc0) === 0x80) start--;
    const lead = bytes[start]!;
    const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (start + length > end) end = start;
  }
  return bytes.subarray(0, end).toString('utf8').replaceAll('\0', '');
}

/** How a request written on a kept-alive connection fails when the receiver closes it at that moment. */
const CLOSED_UNDER_US = new Set(['ECONNRESET', 'EPIPE']);

export interface AttemptResult {
  status: number | null;
  retryAfter: string | undefined;
  error: string | null;
  durationMs: number;
  /** The first RESPONSE_BODY_KEPT bytes of the answer's body as text (keptBodyText); null without an answer. */
  body: string | null;
  /** The body went on past what `body` keeps. */
  bodyTruncated: boolean;
  /** The request was sent again on a new connection after the receiver closed a reused one under it. */
  reconnected: boolean;
}

export interface SenderOptions {
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  /** How names are resolved (node:net's `lookup` connect option); dns.lookup unless given (tests name addresses). */
  lookup?: LookupFunction;
}

type Agents = { http: http.Agent; https: https.Agent };

/** An attempt that got no answer: no status, no body. */
const NO_ANSWER = { status: null, retryAfter: undefined, body: null, bodyTruncated: false } as const;

interface Exchange {
  status: number | null;
  retryAfter: string | undefined;
  error: string | null;
  body: string | null;
  bodyTruncated: boolean;
  /** Failed on a reused connection before a single byte of the answer: the receiver never saw the request. */
  closedUnderUs: boolean;
}

export class WebhookSender {
  private readonly agents: Agents;
  /** For the one immediate retry: never a kept-alive socket, so always a new connection. */
  private readonly fresh: Agents;
  private readonly timeoutMs: number;
  private readonly lookup: LookupFunction | undefined;

  constructor(options: SenderOptions) {
    // As many idle connections kept per host as may be open: after a burst, the next one reuses them instead of
    // reconnecting (connect and close cost a busy service CPU when fewer were kept:
    // docs/performance.md#idle-sockets-per-host).
    const common = { keepAlive: true, maxSockets: 50, maxFreeSockets: 50 };
    const once = { keepAlive: false };
    this.agents = options.allowPrivateTargets
      ? { http: new http.Agent(common), https: new https.Agent(common) }
      : { http: new GuardedHttpAgent(common), https: new GuardedHttpsAgent(common) };
    for (const agent of [this.agents.http, this.agents.https]) idleNoLongerThanHinted(agent);
    this.fresh = options.allowPrivateTargets
      ? { http: new http.Agent(once), https: new https.Agent(once) }
      : { http: new GuardedHttpAgent(once), https: new GuardedHttpsAgent(once) };
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.lookup = options.lookup;
  }

  /**
   * Standard Webhooks signature: v1, base64 HMAC-SHA256 of "id.timestamp.body" keyed by the secret's bytes (the
   * base64 after whsec_). node:crypto rather than the reference library's pure-JS SHA-256; a test checks that both
   * give the same signature, and every delivery test verifies with the reference library.
   */
  static sign(secret: string, id: string, at: Date, body: string) {
    const key = webhookSigningKey(secret);
    return `v1,${createHmac('sha256', key)
      .update(`${id}.${Math.floor(at.getTime() / 1000)}.${body}`)
      .digest('base64')}`;
  }

  async send(target: { url: string; secret: string }, id: string, body: string, at: Date): Promise<AttemptResult> {
    const started = performance.now();
    const result = (exchange: Omit<Exchange, 'closedUnderUs'>, reconnected = false): AttemptResult => ({
      status: exchange.status,
      retryAfter: exchange.retryAfter,
      error: exchange.error,
      body: exchange.body,
      bodyTruncated: exchange.bodyTruncated,
      durationMs: Math.round(performance.now() - started),
      reconnected,
    });
    const timestamp = Math.floor(at.getTime() / 1000);
    let signature: string;
    try {
      // Empty: the stored secret did not open with this process's secrets keys (src/storage/delivery-work.ts).
      if (target.secret === '') throw new Error("the endpoint's secret does not open with this process's SECRETS_KEY");
      signature = WebhookSender.sign(target.secret, id, new Date(timestamp * 1000), body);
    } catch (error) {
      // A stored secret that cannot sign (only hand-edited data can get here): a failed attempt, recorded and
      // retried on schedule like any other, never a send without a valid signature.
      return {
        ...result({ ...NO_ANSWER, error: `cannot sign: ${(error as Error).message}` }),
        durationMs: 0,
      };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
      'content-length': String(Buffer.byteLength(body)),
    };
    let url: URL;
    try {
      url = new URL(target.url);
    } catch {
      return result({ ...NO_ANSWER, error: 'invalid URL' });
    }
    const secure = url.protocol === 'https:';
    const first = await this.post(url, headers, body, secure ? this.agents.https : this.agents.http, this.timeoutMs);
    if (!first.closedUnderUs) return result(first);
    // The receiver closed an idle keep-alive connection just as the request was written (its keep-alive timeout
    // and our reuse crossed): it never saw the request. Node's guidance (request.reusedSocket): send it again at
    // once, on a new connection, within the same attempt.
    const remaining = Math.max(1, this.timeoutMs - (performance.now() - started));
    return result(await this.post(url, headers, body, secure ? this.fresh.https : this.fresh.http, remaining), true);
  }

  private post(
    url: URL,
    headers: Record<string, string>,
    body: string,
    agent: http.Agent,
    timeoutMs: number,
  ): Promise<Exchange> {
    return new Promise<Exchange>((resolve) => {
      let settled = false;
      const done = (exchange: Exchange) => {
        if (settled) return;
        settled = true;
        resolve(exchange);
      };
      const client = url.protocol === 'https:' ? https : http;
      const timedOut = () => new Error(`timed out after ${this.timeoutMs} ms`);
      let bytesBefore: number | null = null;
      let answered = false;
      const options = {
        method: 'POST',
        headers,
        agent,
        timeout: timeoutMs,
        ...(this.lookup && { lookup: this.lookup }),
      };
      const request = client.request(url, options, (response) => {
        answered = true;
        idleHints.set(response.socket, String(response.headers['keep-alive'] ?? ''));
        // The first bytes are kept (copied: a chunk's buffer may be far larger); the rest is drained, for the
        // connection to be reused, up to RESPONSE_BODY_DRAINED.
        const kept: Buffer[] = [];
        let keptBytes = 0;
        let readBytes = 0;
        const announced = Number(response.headers['content-length'] ?? 0);
        const drainTo = announced > RESPONSE_BODY_DRAINED ? RESPONSE_BODY_KEPT : RESPONSE_BODY_DRAINED;
        const answer = (error: string | null, retryAfter = response.headers['retry-after']) => {
          const truncated = readBytes > keptBytes;
          return {
            status: response.statusCode ?? null,
            retryAfter,
            error,
            body: keptBodyText(Buffer.concat(kept), truncated),
            bodyTruncated: truncated,
            closedUnderUs: false,
          };
        };
        response.on('data', (chunk: Buffer) => {
          readBytes += chunk.length;
          if (keptBytes < RESPONSE_BODY_KEPT) {
            const part = Buffer.from(chunk.subarray(0, RESPONSE_BODY_KEPT - keptBytes));
            kept.push(part);
            keptBytes += part.length;
          }
          if (readBytes > keptBytes && readBytes >= drainTo) {
            // Enough: the answer is settled, and closing the connection stops the reading (it is not reused).
            done(answer(null));
            response.destroy();
          }
        });
        response.on('end', () => done(answer(null)));
        response.on('error', (error) => done(answer(error.message, undefined)));
      });
      request.on('socket', (socket) => {
        bytesBefore = socket.bytesRead;
      });
      const deadline = setTimeout(() => request.destroy(timedOut()), timeoutMs);
      request.on('close', () => clearTimeout(deadline));
      request.on('timeout', () => request.destroy(timedOut()));
      request.on('error', (error: NodeJS.ErrnoException) => {
        const closedUnderUs =
          request.reusedSocket &&
          !answered &&
          CLOSED_UNDER_US.has(error.code ?? '') &&
          request.socket?.bytesRead === bytesBefore;
        done({ ...NO_ANSWER, error: error.message, closedUnderUs });
      });
      request.end(body);
    });
  }

  close() {
    for (const agent of [this.agents.http, this.agents.https, this.fresh.http, this.fresh.https]) agent.destroy();
  }
}
