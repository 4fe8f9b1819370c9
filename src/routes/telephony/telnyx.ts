// Telnyx's webhooks (Call Control v2): one signed route for every event of a call we placed. They move calls along,
// hand answered calls to the agent's runtime (a media stream or SIP, docs/agent-runtime.md), and act on the
// answering-machine verdict: a machine is left the agent's message once its greeting is over, or hung up on.
import type { FastifyInstance, FastifyRequest } from 'fastify';
// The verifier alone: the package's root would bring its whole REST client into the server's bundle for one class.
// It is what the SDK's client.webhooks.unwrap runs (test/dispatch/telnyx.test.ts checks both agree).
import { TelnyxWebhook } from 'telnyx/lib/webhooks.js';
import type { CallRow as Call } from '../../storage/index.js';
import { transitionCalls } from '../../calls/transition.js';
import { isTerminal } from '../../domain/call-lifecycle.js';
import { voicemailText } from '../../domain/voicemail.js';
import type { AnsweredBy } from '../../../schemas/vocabulary.js';
import { useHttpErrors } from '../../http-errors.js';
import { isUuid } from '../../../schemas/uuid.js';
import { handOffPairs, staticPairs } from '../../dispatch/hand-off.js';
import {
  answeredByOfTelnyx,
  callOfHandOffLeg,
  decodeClientState,
  handOffLegState,
  mapTelnyxHangup,
  TELNYX_EVENTS_PATH,
  TelnyxDialer,
  type TelnyxCallState,
  type TelnyxCommand,
} from '../../dispatch/telnyx-dialer.js';
import { sipTransfer } from '../../dispatch/telnyx-hand-off.js';

export interface TelnyxRoutesOptions {
  /** wss:// media-stream address of the voice-agent runtime, for agents without their own hand-off. */
  agentStreamUrl?: string | undefined;
}

/** What the route reads of a webhook: `{ data: { event_type, payload: { call_control_id, client_state, ... } } }`. */
interface TelnyxEvent {
  type: string;
  payload: Record<string, unknown>;
  callControlId: string | null;
}

function eventOf(raw: string): TelnyxEvent | null {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return null;
  }
  const data = (body as { data?: unknown } | null)?.data as { event_type?: unknown; payload?: unknown } | undefined;
  if (typeof data?.event_type !== 'string' || typeof data.payload !== 'object' || data.payload === null) return null;
  const payload = data.payload as Record<string, unknown>;
  const id = payload.call_control_id;
  return { type: data.event_type, payload, callControlId: typeof id === 'string' && id !== '' ? id : null };
}

/** The request's headers as the SDK's verifier reads them: a header sent twice counts as absent. */
function headersOf(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
  return headers;
}

const MACHINE_VERDICTS = new Set(['call.machine.detection.ended', 'call.machine.premium.detection.ended']);
const GREETING_ENDS = new Set(['call.machine.greeting.ended', 'call.machine.premium.greeting.ended']);
const STREAM_ENDS = new Set(['streaming.stopped', 'streaming.failed']);

export default async function telnyxRoutes(fastify: FastifyInstance, options: TelnyxRoutesOptions) {
  // Telnyx is not an API client: its refusals are HTTP errors, not codes of the /api/v1 table.
  await useHttpErrors(fastify);
  // The verifier of each public key (Mission Control, "Keys & Credentials" > "Public Key": base64 of 32 bytes of
  // ed25519): the environment's (TELNYX_PUBLIC_KEY) and each account carrier's, made once per key.
  const verifiers = new Map<string, TelnyxWebhook>();
  const verifierOf = (publicKey: string) => {
    let verifier = verifiers.get(publicKey);
    if (!verifier) verifiers.set(publicKey, (verifier = new TelnyxWebhook(publicKey)));
    return verifier;
  };
  /** The call each verified webhook is about (its client_state), read once, before its signature was checked. */
  const named = new WeakMap<FastifyRequest, Call | null>();

  // The signature covers the body exactly as sent: only this scope keeps JSON as its raw text, parsed once verified.
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  // Before anything is changed. The call the body's client_state names is read first, unverified, only to choose the
  // key: the public key of the Telnyx account it was dialled with (an account's own carrier, or the environment's).
  // The SDK then checks the ed25519 signature over `${timestamp}|${body}` (client_state included) with it, and that
  // telnyx-timestamp is within 5 minutes of this machine's clock.
  fastify.addHook('preHandler', async (request) => {
    const body = typeof request.body === 'string' ? request.body : '';
    const clientState = eventOf(body)?.payload.client_state;
    // A call of ours, or the call whose SIP hand-off leg this is (its key is the call's carrier's).
    const callId = decodeClientState(clientState)?.callId ?? callOfHandOffLeg(clientState);
    const call = callId !== null && isUuid(callId) ? await fastify.storage.calls.findCallById(callId) : null;
    try {
      const publicKey = await fastify.dialers.callbackKey('telnyx', call, fastify.storage);
      if (publicKey === null) throw new Error('no Telnyx key for this call');
      await verifierOf(publicKey).verify(body, headersOf(request));
      named.set(request, call);
    } catch (error) {
      request.log.warn({ reason: (error as Error).message }, 'rejected a Telnyx webhook: missing or invalid signature');
      throw fastify.httpErrors.forbidden('Invalid Telnyx signature');
    }
  });

  /** Commands to a live call go through the dialer it was dialled with: its account's carrier's or the environment's. */
  async function telnyxDialer(call: Call): Promise<TelnyxDialer> {
    const dialer = await fastify.dialers.dialerOf(call, fastify.storage);
    if (!(dialer instanceof TelnyxDialer)) throw new Error("the call's dialer cannot command live Telnyx calls");
    return dialer;
  }

  /** Sends a command; false (logged) when Telnyx refused it, as it refuses a command to a call that is over. */
  async function send(request: FastifyRequest, call: Call, id: string, command: TelnyxCommand): Promise<boolean> {
    try {
      await (await telnyxDialer(call)).command(id, command);
      return true;
    } catch (error) {
      request.log.warn({ err: error, callId: call.id, action: command.action }, 'a Telnyx command was refused');
      return false;
    }
  }

  const context = () => ({
    now: fastify.now(),
    source: 'provider' as const,
    queuedCallTtlMs: fastify.concurrency.limits.queuedCallTtlHours * 3600_000,
    // The agent's runtime had the call: its terminal event waits a little for the runtime's result.
    resultWaitMs: fastify.config.AGENT_RESULT_WAIT_SECONDS * 1000,
  });

  fastify.post(TELNYX_EVENTS_PATH, async (request, reply) => {
    const event = eventOf(typeof request.body === 'string' ? request.body : '');
    if (!event) throw fastify.httpErrors.badRequest('Not a Telnyx call event');
    const state = decodeClientState(event.payload.client_state);
    // Signed by Telnyx but not about a call we dialled (the SIP hand-off's own leg, another application's call on
    // the same connection): nothing to do.
    if (!state || event.callControlId === null) return reply.code(204).send();
    const call = named.get(request) ?? null;
    if (!call) throw fastify.httpErrors.notFound('Call not found');
    const id = event.callControlId;
    // A late webhook of an earlier attempt changes nothing; an earlier attempt answered late is hung up, as Twilio's
    // TwiML hangs it up: nobody is connected to the agent on a call the service no longer follows.
    if (state.attempt !== call.attempt) {
      if (event.type === 'call.answered') await send(request, call, id, { action: 'hangup' });
      return reply.code(204).send();
    }
    if (call.providerCallId !== null && call.providerCallId !== id) throw fastify.httpErrors.notFound('Call not found');
    // The webhook can beat the dispatcher's own write of the id (or follow a dial that timed out): record it here.
    const learnsId = call.providerCallId === null;

    if (event.type === 'call.answered') await answered(request, call, id, state, learnsId);
    else if (event.type === 'call.hangup')
      await hungUp(call, id, state, typeof event.payload.hangup_cause === 'string' ? event.payload.hangup_cause : '');
    else if (MACHINE_VERDICTS.has(event.type)) await verdict(request, call, id, state, event.payload.result);
    else if (GREETING_ENDS.has(event.type)) await greetingEnded(request, call, id, state);
    else if (event.type === 'call.speak.ended') await messageSpoken(request, call, id);
    else if (STREAM_ENDS.has(event.type)) await streamEnded(request, call, id);
    else if (learnsId) await fastify.storage.calls.recordProviderCallId(call.id, id);
    return reply.code(204).send();
  });

  /** The callee answered: the call is in progress, and the webhook that moved it hands it to the agent's runtime. */
  async function answered(request: FastifyRequest, call: Call, id: string, state: TelnyxCallState, learnsId: boolean) {
    // Already over here (canceled, or its dial was given up on): nobody should be connected to the agent.
    if (isTerminal(call.status)) return void (await send(request, call, id, { action: 'hangup' }));
    const [applied] = await transitionCalls(
      fastify.storage,
      { kind: 'ids', ids: [call.id] },
      (locked) =>
        locked.attempt === state.attempt
          ? { update: { kind: 'answered' }, extra: learnsId ? { providerCallId: id } : {} }
          : null,
      context(),
    );
    if (learnsId && (applied?.steps.length ?? 0) === 0) await fastify.storage.calls.recordProviderCallId(call.id, id);
    // A repeated call.answered (Telnyx retries a webhook it thinks was lost) hands nothing off a second time.
    if ((applied?.steps ?? []).some((step) => step.to === 'in_progress')) await handOff(request, call, id);
  }

  /** The hand-off the agent says, made now (as Twilio's TwiML is fetched on answer): a stream, or a SIP transfer. */
  async function handOff(request: FastifyRequest, call: Call, id: string) {
    const agent = await fastify.storage.accounts.findAgentById(call.agentId);
    const token = await fastify.contextTokens.sign(call.id, call.attempt);
    let command: TelnyxCommand;
    if (agent?.handoff === 'sip' && agent.sipUri) {
      command = sipTransfer(agent.sipUri, handOffPairs('sip', call, staticPairs(agent.sipHeaders, 'sip'), token));
      // The leg's webhooks are checked with the call's carrier's key: an account's own carrier needs the call named.
      if (call.carrierAccountId !== null) command = { ...command, legState: handOffLegState(call.id) };
    } else {
      const streamUrl = agent?.streamUrl ?? options.agentStreamUrl;
      if (!streamUrl) {
        request.log.error(
          { callId: call.id, agentId: call.agentId },
          'no stream URL for the agent: the call is hung up',
        );
        return void (await send(request, call, id, { action: 'hangup' }));
      }
      const parameters = handOffPairs('stream', call, staticPairs(agent?.streamParameters, 'stream'), token);
      command = { action: 'streaming_start', streamUrl, parameters };
    }
    // A hand-off Telnyx refused leaves the callee with nobody: hung up, as Twilio hangs up on TwiML it cannot fetch.
    if (!(await send(request, call, id, command))) await send(request, call, id, { action: 'hangup' });
  }

  /** The call ended: its cause, read with what the call's row says under its lock (answered, by a machine). */
  async function hungUp(call: Call, id: string, state: TelnyxCallState, cause: string) {
    const learnsId = call.providerCallId === null;
    const [applied] = await transitionCalls(
      fastify.storage,
      { kind: 'ids', ids: [call.id] },
      (locked) =>
        locked.attempt === state.attempt
          ? {
              update: mapTelnyxHangup(cause, locked.status === 'in_progress', locked.answeredBy),
              extra: learnsId ? { providerCallId: id } : {},
            }
          : null,
      context(),
    );
    if (learnsId && (applied?.steps.length ?? 0) === 0) await fastify.storage.calls.recordProviderCallId(call.id, id);
  }

  /**
   * Machine detection's verdict, for calls dialled with the agent's detection on (client_state names the policy as
   * it was then). A person, or a verdict that could not tell, is recorded and the call goes on with the agent. A
   * machine is recorded (the hang-up then fails the call with reason voicemail): hung up on at once, or, with a
   * message to leave, left it when its greeting ends (greetingEnded).
   */
  async function verdict(request: FastifyRequest, call: Call, id: string, state: TelnyxCallState, result: unknown) {
    if (state.voicemail === 'off' || call.answeredBy === 'machine') return; // not asked for, or known already
    const answeredBy = answeredByOfTelnyx(result);
    if (answeredBy !== 'machine') return void (await record(call, answeredBy, null));
    const text = state.voicemail === 'leave_message' ? await messageFor(call) : null;
    // Recorded before the call is changed: the hang-up that follows must find it.
    if ((await record(call, 'machine', false)) && text === null) await send(request, call, id, { action: 'hangup' });
  }

  /**
   * A machine's greeting is over (a beep, or silence after it). Premium detection may report a beep before, or
   * instead of, its verdict: this is then the verdict too. With a message to leave, the agent's stream is stopped
   * and the message spoken (its end hangs up: messageSpoken); otherwise the machine is hung up on.
   */
  async function greetingEnded(request: FastifyRequest, call: Call, id: string, state: TelnyxCallState) {
    if (state.voicemail === 'off' || call.answeredBy === 'human' || call.voicemailLeft === true) return;
    const text = state.voicemail === 'leave_message' ? await messageFor(call) : null;
    if (text === null) {
      if (call.answeredBy === 'machine') return; // hung up on at its verdict already
      if (await record(call, 'machine', false)) await send(request, call, id, { action: 'hangup' });
      return;
    }
    if (!(await record(call, 'machine', true))) return; // over already (the machine hung up first)
    // A SIP hand-off has no stream to stop: Telnyx refuses this one, and the message is spoken all the same.
    await send(request, call, id, { action: 'streaming_stop' });
    if (await send(request, call, id, { action: 'speak', text })) return;
    // The call is over, or Telnyx is away: no message was left. It still ends on the machine as failed, voicemail.
    await record(call, 'machine', false);
    await send(request, call, id, { action: 'hangup' });
  }

  /** The message was spoken (or cut short): the call is hung up, as Twilio's <Say> is followed by <Hangup/>. */
  async function messageSpoken(request: FastifyRequest, call: Call, id: string) {
    if (call.answeredBy === 'machine' && call.voicemailLeft === true && !isTerminal(call.status))
      await send(request, call, id, { action: 'hangup' });
  }

  /**
   * The agent's stream ended (the runtime closed its socket) or could not be opened: the call is hung up, as Twilio
   * hangs up when a <Connect><Stream> ends (nothing follows it), so a runtime ends a call by closing its socket on
   * either carrier. Not while the voicemail message is spoken: that stream was stopped by the service.
   */
  async function streamEnded(request: FastifyRequest, call: Call, id: string) {
    if (call.status !== 'in_progress' || (call.answeredBy === 'machine' && call.voicemailLeft === true)) return;
    await send(request, call, id, { action: 'hangup' });
  }

  function record(call: Call, answeredBy: AnsweredBy, voicemailLeft: boolean | null): Promise<boolean> {
    return fastify.storage.calls.recordAnsweredBy(call.id, call.attempt, { answeredBy, voicemailLeft });
  }

  /** The agent's message for this call as it is now, ready to say; null when the agent has none to leave. */
  async function messageFor(call: Call): Promise<string | null> {
    const agent = await fastify.storage.accounts.findAgentById(call.agentId);
    return voicemailText(agent?.voicemailMessage ?? null, call.name);
  }
}
