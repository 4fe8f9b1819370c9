// The Twilio adapter of the dialer port: places calls over Programmable Voice's REST API, and maps status callbacks.
import type { CallUpdate } from '../domain/call-lifecycle.js';
import type { DialRequest, Dialer } from './dialer.js';

export interface TwilioDialerOptions {
  accountSid: string;
  authToken: string;
  /** https://api.twilio.com, or a local stand-in in tests. */
  apiBaseUrl: string;
  /** This service's public https address: Twilio calls back to it. */
  publicBaseUrl: string;
  timeoutMs?: number;
}

// Twilio reports every step, so a call whose "answered" callback was lost still ends correctly.
const STATUS_EVENTS = ['initiated', 'ringing', 'answered', 'completed'] as const;

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Where Twilio sends status callbacks and fetches TwiML for a call; the routes verify signatures against these. */
export function callbackUrls(publicBaseUrl: string, callId: string) {
  const base = `${trimSlash(publicBaseUrl)}/telephony/twilio`;
  const query = `?call_id=${encodeURIComponent(callId)}`;
  return { twiml: `${base}/twiml${query}`, status: `${base}/status${query}` };
}

export class TwilioDialer implements Dialer {
  readonly kind = 'twilio' as const;
  private readonly endpoint: string;
  private readonly authorization: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: TwilioDialerOptions) {
    this.endpoint = `${trimSlash(options.apiBaseUrl)}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Calls.json`;
    this.authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async dial(request: DialRequest): Promise<{ providerCallId: string }> {
    const urls = callbackUrls(this.options.publicBaseUrl, request.callId);
    const form = new URLSearchParams({
      To: request.to,
      From: request.from,
      Url: urls.twiml,
      Method: 'POST',
      StatusCallback: urls.status,
      StatusCallbackMethod: 'POST',
    });
    for (const event of STATUS_EVENTS) form.append('StatusCallbackEvent', event);

    let response: Response;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          authorization: this.authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const reason =
        (error as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (error as Error).message;
      throw new Error(`Twilio call create failed: ${this.redact(reason)}`, { cause: error });
    }
    const text = await response.text().catch(() => '');
    let body: { sid?: unknown; code?: unknown; message?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // Not JSON (a proxy's error page, say): the HTTP status alone has to do.
    }
    if (!response.ok) {
      const detail =
        body.code !== undefined || body.message !== undefined
          ? `code ${String(body.code)}: ${String(body.message)}`
          : 'no error details';
      throw new Error(this.redact(`Twilio refused the call (HTTP ${response.status}, ${detail})`));
    }
    if (typeof body.sid !== 'string' || body.sid === '') {
      throw new Error(`Twilio accepted the call but answered without a call sid (HTTP ${response.status})`);
    }
    return { providerCallId: body.sid };
  }

  /** Twilio's messages never echo the token today; this keeps it so if one ever does. */
  private redact(text: string): string {
    if (!this.options.authToken) return text;
    return text.split(this.options.authToken).join('[REDACTED]');
  }
}

/**
 * A status callback's CallStatus as a lifecycle update, or null when there is nothing to record: queued, initiated
 * and ringing all mean "still dialing", which the dispatcher already recorded.
 */
export function mapTwilioStatus(callStatus: string, callDuration?: string): CallUpdate | null {
  switch (callStatus) {
    case 'in-progress':
      return { kind: 'answered' };
    case 'completed': {
      const seconds =
        callDuration !== undefined && /^\d+$/.test(callDuration.trim()) ? Number(callDuration) : undefined;
      return seconds === undefined ? { kind: 'completed' } : { kind: 'completed', durationSeconds: seconds };
    }
    case 'busy':
      return { kind: 'failed', reason: 'busy' };
    case 'no-answer':
      return { kind: 'failed', reason: 'no_answer' };
    case 'canceled':
      return { kind: 'failed', reason: 'canceled' };
    case 'failed':
      return { kind: 'failed', reason: 'provider_error' };
    default:
      return null;
  }
}
