// The Twilio adapter of the dialer port: places calls over Programmable Voice's REST API (with asynchronous
// answering-machine detection when the agent wants it), changes live calls, and maps status callbacks. SignalWire's
// LaML API is the same API at another address (src/dispatch/signalwire-dialer.ts): one class serves both.
import type { CallUpdate } from '../domain/call-lifecycle.js';
import type { AnsweredBy, VoicemailPolicy } from '../../schemas/vocabulary.js';
import type { DialRequest, Dialer } from './dialer.js';

/** A carrier that speaks Twilio's Calls resource and callbacks: where its API lies and where it calls us back. */
export interface TwilioApi {
  kind: 'twilio' | 'signalwire';
  /** Its name in errors and logs. */
  name: string;
  /** The API version's path below the API's base URL; the Calls resource is `{apiPath}/Accounts/{sid}/Calls`. */
  apiPath: string;
  /** The path below PUBLIC_BASE_URL of its callback routes (status, twiml, amd). */
  callbackPath: string;
}

export const TWILIO_API: TwilioApi = {
  kind: 'twilio',
  name: 'Twilio',
  apiPath: '/2010-04-01',
  callbackPath: '/telephony/twilio',
};

export interface TwilioDialerOptions {
  accountSid: string;
  authToken: string;
  /** https://api.twilio.com, or a local stand-in in tests. */
  apiBaseUrl: string;
  /** This service's public https address: Twilio calls back to it. */
  publicBaseUrl: string;
  timeoutMs?: number;
  /** The carrier behind apiBaseUrl: Twilio unless told (SignalWire: SIGNALWIRE_API). */
  api?: TwilioApi;
}

// Twilio reports every step, so a call whose "answered" callback was lost still ends correctly.
const STATUS_EVENTS = ['initiated', 'ringing', 'answered', 'completed'] as const;

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Where Twilio sends status callbacks, fetches TwiML and sends the answering-machine verdict for a call's attempt; the
 * routes verify signatures against these. From the second attempt on they name it (`attempt`), so that a late callback
 * of an earlier attempt of the same call changes nothing (src/routes/telephony/twilio.ts); the first attempt's carry
 * none, as before retries. The verdict's URL names the agent's voicemail policy as it was when the call was dialled
 * (Twilio signs the URL with the rest, so it cannot be changed on the way).
 */
export function callbackUrls(
  publicBaseUrl: string,
  callId: string,
  attempt = 1,
  voicemail: VoicemailPolicy = 'off',
  callbackPath = TWILIO_API.callbackPath,
) {
  const base = `${trimSlash(publicBaseUrl)}${callbackPath}`;
  const query = `?call_id=${encodeURIComponent(callId)}${attempt > 1 ? `&attempt=${attempt}` : ''}`;
  return {
    twiml: `${base}/twiml${query}`,
    status: `${base}/status${query}`,
    amd: `${base}/amd${query}&voicemail=${voicemail}`,
  };
}

/** How a live call is changed: its TwiML replaced (what it does next), or ended. */
export type LiveCallChange = { twiml: string } | { status: 'completed' };

export class TwilioDialer implements Dialer {
  readonly kind: TwilioApi['kind'];
  readonly api: TwilioApi;
  private readonly endpoint: string;
  private readonly authorization: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: TwilioDialerOptions) {
    this.api = options.api ?? TWILIO_API;
    this.kind = this.api.kind;
    this.endpoint = `${trimSlash(options.apiBaseUrl)}${this.api.apiPath}/Accounts/${encodeURIComponent(options.accountSid)}/Calls.json`;
    this.authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async dial(request: DialRequest): Promise<{ providerCallId: string }> {
    const urls = callbackUrls(
      this.options.publicBaseUrl,
      request.callId,
      request.attempt,
      request.voicemail,
      this.api.callbackPath,
    );
    const form = new URLSearchParams({
      To: request.to,
      From: request.from,
      Url: urls.twiml,
      Method: 'POST',
      StatusCallback: urls.status,
      StatusCallbackMethod: 'POST',
    });
    for (const event of STATUS_EVENTS) form.append('StatusCallbackEvent', event);
    if (request.voicemail !== 'off') {
      // Answering-machine detection (Twilio's "AMD"). DetectMessageEnd: on a machine, the verdict (machine_end_beep,
      // _silence or _other) comes once its greeting is over, which is when a message left is recorded whole; a person
      // (human) or a fax is told at once. AsyncAmd: the call is connected to the agent on answer as without
      // detection, so a person hears no silence while Twilio listens; the verdict is POSTed (signed, as every
      // callback) to AsyncAmdStatusCallback, whose route then redirects the live call to the message or hangs it up.
      form.set('MachineDetection', 'DetectMessageEnd');
      form.set('AsyncAmd', 'true');
      form.set('AsyncAmdStatusCallback', urls.amd);
      form.set('AsyncAmdStatusCallbackMethod', 'POST');
    }
    const body = await this.post(this.endpoint, form, { failed: 'call create failed', refused: 'the call' });
    if (typeof body.sid !== 'string' || body.sid === '') {
      throw new Error(`${this.api.name} accepted the call but answered without a call sid (HTTP ${body.httpStatus})`);
    }
    return { providerCallId: body.sid };
  }

  /**
   * Changes a call that is in progress (the Call resource's update, POST .../Calls/{CallSid}.json): `twiml` replaces
   * what the call is doing with these instructions (Twilio stops the agent's stream and runs them), `status:
   * completed` hangs it up. Throws if Twilio refused (a call already over, say: error 21220).
   */
  async updateCall(callSid: string, change: LiveCallChange): Promise<void> {
    const form = new URLSearchParams('twiml' in change ? { Twiml: change.twiml } : { Status: change.status });
    const url = `${this.endpoint.slice(0, -'.json'.length)}/${encodeURIComponent(callSid)}.json`;
    await this.post(url, form, { failed: 'call update failed', refused: 'the call update' });
  }

  /** POSTs a form to Twilio's REST API; resolves with its JSON answer, throws with Twilio's error (never the token). */
  private async post(
    url: string,
    form: URLSearchParams,
    words: { failed: string; refused: string },
  ): Promise<{ sid?: unknown; httpStatus: number }> {
    let response: Response;
    try {
      response = await fetch(url, {
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
      throw new Error(`${this.api.name} ${words.failed}: ${this.redact(reason)}`, { cause: error });
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
      throw new Error(this.redact(`${this.api.name} refused ${words.refused} (HTTP ${response.status}, ${detail})`));
    }
    return { sid: body.sid, httpStatus: response.status };
  }

  /** Twilio's messages never echo the token today; this keeps it so if one ever does. */
  private redact(text: string): string {
    if (!this.options.authToken) return text;
    return text.split(this.options.authToken).join('[REDACTED]');
  }
}

/**
 * A status callback's CallStatus as a lifecycle update, or null when there is nothing to record: queued, initiated
 * and ringing all mean "still dialing", which the dispatcher already recorded. `answeredBy` is the call's recorded
 * verdict: a call that ends (completed) after a machine answered it failed, with reason voicemail.
 */
export function mapTwilioStatus(
  callStatus: string,
  callDuration?: string,
  answeredBy: AnsweredBy | null = null,
): CallUpdate | null {
  switch (callStatus) {
    case 'in-progress':
      return { kind: 'answered' };
    case 'completed': {
      if (answeredBy === 'machine') return { kind: 'failed', reason: 'voicemail' };
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

/**
 * Twilio's AnsweredBy (the answering-machine verdict) in our vocabulary. `human` is a person. `machine_start` (a
 * machine, told at once: MachineDetection=Enable), `machine_end_beep`, `machine_end_silence` and `machine_end_other`
 * (a machine whose greeting ended with a beep, with silence, or otherwise: DetectMessageEnd's verdicts, sent once the
 * greeting is over) and `fax` are a machine. `unknown` (detection ran out of time or could not tell) and anything
 * else are unknown, and the call goes on as with a person: hanging up on someone who answered is the worse mistake.
 */
export function answeredByOf(twilioAnsweredBy: string): AnsweredBy {
  if (twilioAnsweredBy === 'human') return 'human';
  if (twilioAnsweredBy === 'fax' || twilioAnsweredBy.startsWith('machine_')) return 'machine';
  return 'unknown';
}
