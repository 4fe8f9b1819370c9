// createClient: triggerCall through openapi-fetch (types from openapi/openapi.json) with one Idempotency-Key per
// logical call kept across its retries, and webhooks.verify.
import createFetchClient from 'openapi-fetch';
import { TriggerCallError } from './errors.js';
import { nextDelayMs, parseRetryAfter, retryPolicy, RETRYABLE_STATUSES, sleep, type RetryOptions } from './retry.js';
import type { paths } from './schema.js';
import type { ErrorResponse, TriggerRequest, TriggerResponse } from './types.js';
import { verifyWebhook, type WebhookHeaders } from './webhooks.js';

export interface ClientOptions {
  /** Where the service is, without the path: `https://calls.example.com`. */
  baseUrl: string;
  /** The account's API key (`svc_sk_…`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** A fetch to use instead of globalThis.fetch (a proxy agent, a test's recorder). */
  fetch?: (request: Request) => Promise<Response>;
  /** How hard to retry 429, 503 and network failures; see RetryOptions for the defaults. */
  retry?: RetryOptions;
}

export interface TriggerCallOptions {
  /**
   * The key of this logical call (1 to 255 printable ASCII characters): a repeat with the same key and body within
   * 24 h gets the first answer again instead of a second call. Default: a fresh crypto.randomUUID() per triggerCall,
   * kept across its retries. Pass your own (a CRM record's id and attempt) to be safe across process restarts too.
   */
  idempotencyKey?: string;
  /** Aborts the request in flight or the wait between attempts; triggerCall then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface TriggerCallSuccess {
  ok: true;
  data: TriggerResponse;
  /** The key the call was stored under. */
  idempotencyKey: string;
  /** True when the server answered from its idempotency store: the call was made by an earlier request. */
  replayed: boolean;
  /** How many requests were sent, retries included. */
  attempts: number;
}

export interface TriggerCallFailure {
  ok: false;
  error: TriggerCallError;
}

/** triggerCall's outcome: it returns failures as values (and rejects only for an abort or a bug). */
export type TriggerCallResult = TriggerCallSuccess | TriggerCallFailure;

export interface Client {
  triggerCall(body: TriggerRequest, options?: TriggerCallOptions): Promise<TriggerCallResult>;
  webhooks: {
    /** The event of a genuine delivery; throws WebhookVerificationError otherwise. See verifyWebhook. */
    verify: typeof verifyWebhook;
  };
}

export const TRIGGER_PATH = '/api/v1/calls/trigger';

function isEnvelope(value: unknown): value is ErrorResponse {
  return typeof value === 'object' && value !== null && typeof (value as { error?: unknown }).error === 'string';
}

/** The message of an answer that is not the envelope (a proxy's page, an empty body): status and a short excerpt. */
function plainMessage(status: number, body: unknown): string {
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  return text ? `HTTP ${status}: ${text}` : `HTTP ${status}`;
}

/** fetch's own message ("fetch failed") with the reason undici keeps in its cause ("connect ECONNREFUSED …"). */
function networkMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const reason = error.cause instanceof Error ? error.cause.message : null;
  return reason && reason !== error.message ? `${error.message}: ${reason}` : error.message;
}

export function createClient(options: ClientOptions): Client {
  if (!options.apiKey) throw new TypeError('createClient: apiKey is required');
  const policy = retryPolicy(options.retry);
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  async function triggerCall(body: TriggerRequest, callOptions: TriggerCallOptions = {}): Promise<TriggerCallResult> {
    const idempotencyKey = callOptions.idempotencyKey ?? globalThis.crypto.randomUUID();
    const { signal } = callOptions;
    for (let attempt = 1; ; attempt++) {
      let failure: TriggerCallError;
      try {
        const { data, error, response } = await api.POST(TRIGGER_PATH, {
          body,
          params: { header: { 'idempotency-key': idempotencyKey } },
          ...(signal ? { signal } : {}),
        });
        if (data !== undefined) {
          const replayed = response.headers.get('idempotent-replayed') === 'true';
          return { ok: true, data, idempotencyKey, replayed, attempts: attempt };
        }
        const envelope = isEnvelope(error) ? error : null;
        failure = new TriggerCallError({
          kind: 'http',
          status: response.status,
          message: envelope ? envelope.error : plainMessage(response.status, error),
          body: envelope,
          retryAfterMs: RETRYABLE_STATUSES.has(response.status)
            ? parseRetryAfter(response.headers.get('retry-after'))
            : null,
          attempts: attempt,
          idempotencyKey,
        });
        if (!failure.retryable) return { ok: false, error: failure };
      } catch (cause) {
        // An abort is the caller's decision, not a failure to retry.
        if (signal?.aborted) throw signal.reason;
        failure = new TriggerCallError({
          kind: 'network',
          status: null,
          message: networkMessage(cause),
          body: null,
          retryAfterMs: null,
          attempts: attempt,
          idempotencyKey,
          cause,
        });
      }
      const delay = nextDelayMs(attempt, failure.retryAfterMs, policy);
      if (delay === null) return { ok: false, error: failure };
      await sleep(delay, signal);
    }
  }

  return { triggerCall, webhooks: { verify: verifyWebhook } };
}

export type { WebhookHeaders };
