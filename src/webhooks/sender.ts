// One HTTP attempt of a webhook: POST the frozen body with Standard Webhooks headers, no redirects, a hard timeout,
// and (unless private targets are allowed) an agent that refuses private addresses at connect time (DNS rebinding).
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { webhookSigningKey } from '../domain/webhook-secret.js';

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
 * override for this; the agent's own `timeout` option does the same but cost two thirds of the delivery rate to one
 * host (bench/README.md).
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

/** How a request written on a kept-alive connection fails when the receiver closes it at that moment. */
const CLOSED_UNDER_US = new Set(['ECONNRESET', 'EPIPE']);

export interface AttemptResult {
  status: number | null;
  retryAfter: string | undefined;
  error: string | null;
  durationMs: number;
  /** The request was sent again on a new connection after the receiver closed a reused one under it. */
  reconnected: boolean;
}

export interface SenderOptions {
  allowPrivateTargets: boolean;
  timeoutMs?: number;
}

type Agents = { http: http.Agent; https: https.Agent };

interface Exchange {
  status: number | null;
  retryAfter: string | undefined;
  error: string | null;
  /** Failed on a reused connection before a single byte of the answer: the receiver never saw the request. */
  closedUnderUs: boolean;
}

export class WebhookSender {
  private readonly agents: Agents;
  /** For the one immediate retry: never a kept-alive socket, so always a new connection. */
  private readonly fresh: Agents;
  private readonly timeoutMs: number;

  constructor(options: SenderOptions) {
    // As many idle connections kept per host as may be open: after a burst, the next one reuses them instead of
    // reconnecting (connect and close were 2% of a busy service's CPU with 10 kept of 50).
    const common = { keepAlive: true, maxSockets: 50, maxFreeSockets: 50 };
    const once = { keepAlive: false };
    this.agents = options.allowPrivateTargets
      ? { http: new http.Agent(common), https: new https.Agent(common) }
      : { http: new RequestFilteringHttpAgent(common), https: new RequestFilteringHttpsAgent(common) };
    for (const agent of [this.agents.http, this.agents.https]) idleNoLongerThanHinted(agent);
    this.fresh = options.allowPrivateTargets
      ? { http: new http.Agent(once), https: new https.Agent(once) }
      : { http: new RequestFilteringHttpAgent(once), https: new RequestFilteringHttpsAgent(once) };
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
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
      durationMs: Math.round(performance.now() - started),
      reconnected,
    });
    const timestamp = Math.floor(at.getTime() / 1000);
    let signature: string;
    try {
      signature = WebhookSender.sign(target.secret, id, new Date(timestamp * 1000), body);
    } catch (error) {
      // A stored secret that cannot sign (only hand-edited data can get here): a failed attempt, recorded and
      // retried on schedule like any other, never a send without a valid signature.
      return {
        ...result({ status: null, retryAfter: undefined, error: `cannot sign: ${(error as Error).message}` }),
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
      return result({ status: null, retryAfter: undefined, error: 'invalid URL' });
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
      const request = client.request(url, { method: 'POST', headers, agent, timeout: timeoutMs }, (response) => {
        answered = true;
        // The body is not needed, but must be drained for the connection to be reused.
        response.resume();
        idleHints.set(response.socket, String(response.headers['keep-alive'] ?? ''));
        response.on('end', () =>
          done({
            status: response.statusCode ?? null,
            retryAfter: response.headers['retry-after'],
            error: null,
            closedUnderUs: false,
          }),
        );
        response.on('error', (error) =>
          done({
            status: response.statusCode ?? null,
            retryAfter: undefined,
            error: error.message,
            closedUnderUs: false,
          }),
        );
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
        done({ status: null, retryAfter: undefined, error: error.message, closedUnderUs });
      });
      request.end(body);
    });
  }

  close() {
    for (const agent of [this.agents.http, this.agents.https, this.fresh.http, this.fresh.https]) agent.destroy();
  }
}
