// One HTTP attempt of a webhook: POST the frozen body with Standard Webhooks headers, no redirects, a hard timeout,
// and (unless private targets are allowed) an agent that refuses private addresses at connect time (DNS rebinding).
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { webhookSigningKey } from '../domain/webhook-secret.js';

export const WEBHOOK_TIMEOUT_MS = 15_000;
const USER_AGENT = 'outbound-call-trigger-webhooks/1';

export interface AttemptResult {
  status: number | null;
  retryAfter: string | undefined;
  error: string | null;
  durationMs: number;
}

export interface SenderOptions {
  allowPrivateTargets: boolean;
  timeoutMs?: number;
}

export class WebhookSender {
  private readonly agents: { http: http.Agent; https: https.Agent };
  private readonly timeoutMs: number;

  constructor(options: SenderOptions) {
    // As many idle connections kept per host as may be open: after a burst, the next one reuses them instead of
    // reconnecting (connect and close were 2% of a busy service's CPU with 10 kept of 50).
    const common = { keepAlive: true, maxSockets: 50, maxFreeSockets: 50 };
    this.agents = options.allowPrivateTargets
      ? { http: new http.Agent(common), https: new https.Agent(common) }
      : { http: new RequestFilteringHttpAgent(common), https: new RequestFilteringHttpsAgent(common) };
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  }

  /**
   * Standard Webhooks signature: v1, base64 HMAC-SHA256 of "id.timestamp.body" keyed by the secret's bytes (the
   * base64 after whsec_). node:crypto rather than the reference library's pure-JS SHA-256; a test checks that both
   * give the same signature, and every delivery test verifies with the reference library.
   */
  static sign(secret: string, id: string, at: Date, body: string) {
    const key = webhookSigningKey(secret);
    return `v1,${createHmac('sha256', key).update(`${id}.${Math.floor(at.getTime() / 1000)}.${body}`).digest('base64')}`;
  }

  async send(target: { url: string; secret: string }, id: string, body: string, at: Date): Promise<AttemptResult> {
    const started = performance.now();
    const timestamp = Math.floor(at.getTime() / 1000);
    let signature: string;
    try {
      signature = WebhookSender.sign(target.secret, id, new Date(timestamp * 1000), body);
    } catch (error) {
      // A stored secret that cannot sign (only hand-edited data can get here): a failed attempt, recorded and
      // retried on schedule like any other, never a send without a valid signature.
      return { status: null, retryAfter: undefined, error: `cannot sign: ${(error as Error).message}`, durationMs: 0 };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
      'content-length': String(Buffer.byteLength(body)),
    };
    return new Promise<AttemptResult>((resolve) => {
      const done = (status: number | null, retryAfter: string | undefined, error: string | null) =>
        resolve({ status, retryAfter, error, durationMs: Math.round(performance.now() - started) });
      let url: URL;
      try {
        url = new URL(target.url);
      } catch {
        return done(null, undefined, 'invalid URL');
      }
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, { method: 'POST', headers, agent: url.protocol === 'https:' ? this.agents.https : this.agents.http, timeout: this.timeoutMs }, (response) => {
        // The body is not needed, but must be drained for the connection to be reused.
        response.resume();
        response.on('end', () => done(response.statusCode ?? null, response.headers['retry-after'], null));
        response.on('error', (error) => done(response.statusCode ?? null, undefined, error.message));
      });
      const deadline = setTimeout(() => request.destroy(new Error(`timed out after ${this.timeoutMs} ms`)), this.timeoutMs);
      request.on('close', () => clearTimeout(deadline));
      request.on('timeout', () => request.destroy(new Error(`timed out after ${this.timeoutMs} ms`)));
      request.on('error', (error) => done(null, undefined, error.message));
      request.end(body);
    });
  }

  close() {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
