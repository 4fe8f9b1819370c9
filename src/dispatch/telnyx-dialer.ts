// The Telnyx adapter of the dialer port: places calls over Call Control v2 (with answering-machine detection when the
// agent wants it), sends the commands that change live calls, and maps the call's webhooks to our lifecycle.
import type { CallUpdate } from '../domain/call-lifecycle.js';
import { VOICEMAIL_POLICIES, type AnsweredBy, type VoicemailPolicy } from '../../schemas/vocabulary.js';
import type { HandoffPair } from '../../schemas/agent-runtime.js';
import type { DialRequest, Dialer } from './dialer.js';

/** Everything a Telnyx dialer needs: from the environment today, from an account's own carrier settings later. */
export interface TelnyxDialerOptions {
  /** The API key (Mission Control, "API Keys"): the Bearer token of every request. */
  apiKey: string;
  /** The Call Control application (Voice API connection) the calls are placed from. */
  connectionId: string;
  /** https://api.telnyx.com, or a local stand-in in tests. */
  apiBaseUrl: string;
  /** This service's public https address: Telnyx sends the call's webhooks to it. */
  publicBaseUrl: string;
  timeoutMs?: number;
}

/** The path of the one route that receives every webhook of a call Telnyx places for us. */
export const TELNYX_EVENTS_PATH = '/telephony/telnyx/events';

/**
 * How long Telnyx lets the callee's phone ring (`timeout_secs`, 5-600; Telnyx's own default is 30): Twilio's default,
 * so that a call rings as long on either carrier and `no_answer` means the same.
 */
export const TELNYX_RING_SECONDS = 60;

/**
 * Who a webhook is about, as the dial's `client_state` says it: the call, its attempt, and the agent's voicemail policy
 * when it was dialled. Telnyx echoes client_state in every webhook of the call, inside the body its ed25519 signature
 * covers, so none of it can be changed on the way (a webhook URL's query is not signed: Telnyx signs the body alone).
 */
export interface TelnyxCallState {
  callId: string;
  attempt: number;
  voicemail: VoicemailPolicy;
}

/** client_state as Telnyx wants it: base64 (of a small JSON object: `c` call, `a` attempt, `v` voicemail policy). */
export function encodeClientState(state: TelnyxCallState): string {
  return Buffer.from(JSON.stringify({ c: state.callId, a: state.attempt, v: state.voicemail })).toString('base64');
}

/** The state of a webhook's client_state, or null when it is none of ours (absent, not base64 JSON, another shape). */
export function decodeClientState(clientState: unknown): TelnyxCallState | null {
  if (typeof clientState !== 'string' || clientState === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(clientState, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { c, a, v } = value as { c?: unknown; a?: unknown; v?: unknown };
  const voicemail = VOICEMAIL_POLICIES.find((p) => p === v);
  if (typeof c !== 'string' || !Number.isSafeInteger(a) || (a as number) < 1 || voicemail === undefined) return null;
  return { callId: c, attempt: a as number, voicemail };
}

/** The SIP hand-off's leg's client_state: base64 JSON that decodeClientState reads as none of ours. */
export const HAND_OFF_LEG_STATE = Buffer.from(JSON.stringify({ leg: 'sip-hand-off' })).toString('base64');

/**
 * The leg's client_state for a call dialled through an account's own Telnyx carrier: it names the call too, only so
 * that the leg's webhooks can be checked with that account's public key (decodeClientState still reads it as none of
 * ours, and nothing is done with them).
 */
export function handOffLegState(callId: string): string {
  return Buffer.from(JSON.stringify({ leg: 'sip-hand-off', c: callId })).toString('base64');
}

/** The call a hand-off leg's client_state names (handOffLegState), or null. */
export function callOfHandOffLeg(clientState: unknown): string | null {
  if (typeof clientState !== 'string' || clientState === '') return null;
  try {
    const value = JSON.parse(Buffer.from(clientState, 'base64').toString('utf8')) as { leg?: unknown; c?: unknown };
    return value?.leg === 'sip-hand-off' && typeof value.c === 'string' ? value.c : null;
  } catch {
    return null;
  }
}

/** A command to a live call (POST /v2/calls/{call_control_id}/actions/{action}). */
export type TelnyxCommand =
  /** The stream hand-off: Telnyx opens a WebSocket to `streamUrl`; `parameters` arrive in its `start` frame. */
  | { action: 'streaming_start'; streamUrl: string; parameters: readonly HandoffPair[] }
  | { action: 'streaming_stop' }
  /** The SIP hand-off: the call bridged to `to`, the headers in the INVITE. */
  | { action: 'transfer'; to: string; headers: readonly HandoffPair[]; legState?: string }
  /** Text to speech on the call (the voicemail message); Telnyx reports its end with call.speak.ended. */
  | { action: 'speak'; text: string }
  | { action: 'hangup' };

export class TelnyxDialer implements Dialer {
  readonly kind = 'telnyx' as const;
  private readonly base: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: TelnyxDialerOptions) {
    this.base = `${trimSlash(options.apiBaseUrl)}/v2/calls`;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async dial(request: DialRequest): Promise<{ providerCallId: string }> {
    const attempt = request.attempt ?? 1;
    const body: Record<string, unknown> = {
      connection_id: this.options.connectionId,
      to: request.to,
      from: request.from,
      webhook_url: `${trimSlash(this.options.publicBaseUrl)}${TELNYX_EVENTS_PATH}`,
      webhook_url_method: 'POST',
      client_state: encodeClientState({ callId: request.callId, attempt, voicemail: request.voicemail }),
      // Telnyx ignores a second dial with the same command_id: a request repeated by a proxy never rings twice.
      command_id: `dial:${request.callId}:${attempt}`,
      timeout_secs: TELNYX_RING_SECONDS,
    };
    if (request.voicemail !== 'off') {
      // Premium detection runs once the call is answered, beside the agent (the call is handed off at once, as with
      // Twilio's asynchronous detection): call.machine.premium.detection.ended says human_*, machine, fax_detected,
      // silence or not_sure, and call.machine.premium.greeting.ended says when a machine's greeting is over, which is
      // when a message is left whole.
      body.answering_machine_detection = 'premium';
    }
    const answer = await this.post(this.base, body, 'the call');
    const id = (answer.data as { call_control_id?: unknown } | undefined)?.call_control_id;
    if (typeof id !== 'string' || id === '') {
      throw new Error(`Telnyx accepted the call but answered without a call_control_id (HTTP ${answer.httpStatus})`);
    }
    return { providerCallId: id };
  }

  /** Sends a command to a live call. Throws if Telnyx refused it (a call already over: 422, code 90018). */
  async command(callControlId: string, command: TelnyxCommand): Promise<void> {
    const url = `${this.base}/${encodeURIComponent(callControlId)}/actions/${command.action}`;
    await this.post(url, commandBody(command), `the ${command.action} command`);
  }

  /** POSTs JSON to Telnyx's API; resolves with its JSON answer, throws with Telnyx's error (never the key). */
  private async post(
    url: string,
    body: Record<string, unknown>,
    what: string,
  ): Promise<{ data?: unknown; httpStatus: number }> {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const reason =
        (error as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (error as Error).message;
      throw new Error(this.redact(`Telnyx request for ${what} failed: ${reason}`), { cause: error });
    }
    const text = await response.text().catch(() => '');
    let parsed: { data?: unknown; errors?: unknown } = {};
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      // Not JSON (a proxy's error page, say): the HTTP status alone has to do.
    }
    if (!response.ok) {
      const first = Array.isArray(parsed.errors)
        ? (parsed.errors[0] as { code?: string; title?: string; detail?: string } | undefined)
        : undefined;
      const detail = first
        ? `code ${String(first.code)}: ${String(first.title)}${first.detail ? ` (${first.detail})` : ''}`
        : 'no error details';
      throw new Error(this.redact(`Telnyx refused ${what} (HTTP ${response.status}, ${detail})`));
    }
    return { data: parsed.data, httpStatus: response.status };
  }

  /** Telnyx's messages never echo the key today; this keeps it so if one ever does. */
  private redact(text: string): string {
    return this.options.apiKey ? text.split(this.options.apiKey).join('[REDACTED]') : text;
  }
}

function commandBody(command: TelnyxCommand): Record<string, unknown> {
  switch (command.action) {
    case 'streaming_start':
      // Bidirectional RTP in PCMU: the runtime talks back on the same socket, as on Twilio's <Connect><Stream>.
      return {
        stream_url: command.streamUrl,
        stream_track: 'inbound_track',
        stream_bidirectional_mode: 'rtp',
        stream_bidirectional_codec: 'PCMU',
        custom_parameters: command.parameters.map(({ name, value }) => ({ name, value })),
      };
    case 'transfer':
      return {
        to: command.to,
        custom_headers: command.headers.map(({ name, value }) => ({ name, value })),
        // The new leg's webhooks carry a state of no call of ours: the route leaves them alone (the call's own leg
        // reports the end of both).
        target_leg_client_state: command.legState ?? HAND_OFF_LEG_STATE,
      };
    case 'speak':
      // Plain text (never read as SSML), in Telnyx's basic voice.
      return { payload: command.text, payload_type: 'text', voice: 'female', language: 'en-US' };
    case 'streaming_stop':
    case 'hangup':
      return {};
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * A call.hangup's `hangup_cause` as the lifecycle's update. `answered` and `answeredBy` are the call's as recorded
 * when the hang-up is applied (under its lock): a call that was answered ends completed whatever the cause (as
 * Twilio's `completed`), or failed with reason voicemail when a machine answered it. Before an answer: user_busy is
 * busy, timeout and no_answer are no_answer, call_rejected (the callee declined: SIP 603, or the far end refused) is
 * rejected, originator_cancel (the call was hung up by us while ringing) is canceled as Twilio's own `canceled` is;
 * normal_clearing and time_limit mean the call was answered (its call.answered is late or lost) and complete it;
 * not_found, unspecified and anything else are the carrier's error.
 */
export function mapTelnyxHangup(cause: string, answered: boolean, answeredBy: AnsweredBy | null = null): CallUpdate {
  if (answered || cause === 'normal_clearing' || cause === 'time_limit') {
    return answeredBy === 'machine' ? { kind: 'failed', reason: 'voicemail' } : { kind: 'completed' };
  }
  switch (cause) {
    case 'user_busy':
      return { kind: 'failed', reason: 'busy' };
    case 'timeout':
    case 'no_answer':
      return { kind: 'failed', reason: 'no_answer' };
    case 'call_rejected':
      return { kind: 'failed', reason: 'rejected' };
    case 'originator_cancel':
      return { kind: 'failed', reason: 'canceled' };
    default:
      return { kind: 'failed', reason: 'provider_error' };
  }
}

/**
 * A machine-detection verdict (call.machine.detection.ended's human | machine | not_sure, or the premium one's
 * human_residence | human_business | machine | fax_detected | silence | not_sure) in our vocabulary. A person is
 * human, a machine or a fax is machine; silence, not_sure and anything else are unknown, and the call goes on as
 * with a person: hanging up on someone who answered is the worse mistake.
 */
export function answeredByOfTelnyx(result: unknown): AnsweredBy {
  if (result === 'human' || result === 'human_residence' || result === 'human_business') return 'human';
  if (result === 'machine' || result === 'fax_detected') return 'machine';
  return 'unknown';
}
