// The callbacks of a carrier that speaks Twilio's API (Twilio itself, SignalWire's LaML): signed status callbacks that
// move calls along, the TwiML that hands answered calls to the agent's runtime (a media stream or SIP,
// docs/agent-runtime.md), and the answering-machine verdict, on which a machine is left the agent's message or hung up
// on. Registered once per carrier under its own path, each with its own signature check (twilio.ts, signalwire.ts),
// keyed with the credentials of the carrier each call was dialled with (src/dispatch/carrier-dialers.ts).
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CallRow as Call } from '../../storage/index.js';
import { transitionCalls } from '../../calls/transition.js';
import { isTerminal } from '../../domain/call-lifecycle.js';
import { voicemailText } from '../../domain/voicemail.js';
import {
  answeredByOf,
  mapTwilioStatus,
  trimSlash,
  TwilioDialer,
  type TwilioApi,
} from '../../dispatch/twilio-dialer.js';
import { VOICEMAIL_POLICIES } from '../../../schemas/vocabulary.js';
import { useHttpErrors } from '../../http-errors.js';
import { isUuid } from '../../../schemas/uuid.js';
import { handOffPairs, sipTarget, staticPairs } from '../../dispatch/hand-off.js';
import { HANGUP, sipTwiml, streamTwiml, voicemailTwiml } from './twiml.js';

export type TwilioParams = Record<string, string | readonly string[]>;

export interface TwilioCompatibleRoutesOptions {
  /** The carrier: its name, and the path its callbacks arrive under (the dialer gave it these URLs). */
  api: TwilioApi;
  /** The address the carrier was given for callbacks; signatures cover it, so it is never rebuilt from Host headers. */
  publicBaseUrl: string;
  /** wss:// media-stream address of the voice-agent runtime, for agents without their own hand-off. */
  agentStreamUrl?: string | undefined;
  /**
   * Whether the request's headers carry the carrier's signature, keyed with `key` (the credentials of the carrier the
   * call was dialled with), of `url` (as it was given) and the form `params`.
   */
  isSigned(key: string, headers: IncomingHttpHeaders, url: string, params: TwilioParams): boolean;
}

/** A header's one value; a repeated header (an array) is none. */
export function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? undefined : value;
}

function formOf(request: FastifyRequest): URLSearchParams {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

function paramsOf(form: URLSearchParams): TwilioParams {
  // No prototype: a parameter named __proto__ must stay a plain parameter.
  const params = Object.create(null) as Record<string, string[]>;
  for (const [name, value] of form) (params[name] ??= []).push(value);
  return params;
}

export async function twilioCompatibleRoutes(fastify: FastifyInstance, options: TwilioCompatibleRoutesOptions) {
  const publicBaseUrl = trimSlash(options.publicBaseUrl);
  const { name, callbackPath } = options.api;
  // The carrier is not an API client: its refusals are HTTP errors, not codes of the /api/v1 table.
  await useHttpErrors(fastify);

  // Only this scope reads forms: the public API stays JSON-only.
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, new URLSearchParams(body as string));
  });

  /** The call each verified callback names (call_id), read once, before its signature was checked. */
  const named = new WeakMap<FastifyRequest, Call | null>();

  // Before anything is changed; request.url is the path and query exactly as the carrier sent them. The call the
  // URL names is read first, unverified, only to choose the key: its carrier's credentials (an account's own, or
  // the environment's), so that a callback signed with one account's credentials moves none of another's calls.
  fastify.addHook('preHandler', async (request) => {
    const callId = (request.query as { call_id?: unknown }).call_id;
    const call = typeof callId === 'string' && isUuid(callId) ? await fastify.storage.calls.findCallById(callId) : null;
    const key = await fastify.dialers.callbackKey(options.api.kind, call, fastify.storage);
    if (
      key === null ||
      !options.isSigned(key, request.headers, `${publicBaseUrl}${request.url}`, paramsOf(formOf(request)))
    ) {
      request.log.warn(
        { path: request.url.split('?')[0] },
        `rejected a ${name} callback: missing or invalid signature`,
      );
      throw fastify.httpErrors.forbidden(`Invalid ${name} signature`);
    }
    named.set(request, call);
  });

  /** The call named by call_id, provided it is the one the carrier calls CallSid (once we know its sid). */
  async function findCall(request: FastifyRequest, callSid: string | null): Promise<Call> {
    const call = named.get(request) ?? null;
    if (!call || (call.providerCallId !== null && callSid !== null && call.providerCallId !== callSid))
      throw fastify.httpErrors.notFound('Call not found');
    return call;
  }

  /**
   * Whether a callback is about the call's current attempt: its URL's `attempt` (absent: the first). A late callback
   * of an earlier attempt (its sid is not the current one's, which may not be known yet) must not move the next one.
   */
  function isCurrentAttempt(request: FastifyRequest, call: Call): boolean {
    const { attempt } = request.query as { attempt?: unknown };
    return (attempt === undefined ? 1 : Number(attempt)) === call.attempt;
  }

  fastify.post(`${callbackPath}/status`, async (request, reply) => {
    const form = formOf(request);
    const callSid = form.get('CallSid') || null;
    const call = await findCall(request, callSid);
    if (!isCurrentAttempt(request, call)) return reply.code(204).send();
    // The callback can beat the dispatcher's own write of the sid (or follow a dial that timed out): record it here.
    const learnsSid = call.providerCallId === null && callSid !== null;
    const callStatus = form.get('CallStatus') ?? '';
    const callDuration = form.get('CallDuration') ?? undefined;
    let recorded = false;
    if (mapTwilioStatus(callStatus, callDuration) !== null) {
      // Mapped again under the call's lock: whether a machine answered (the verdict's route records it) decides how
      // the call ends.
      const [applied] = await transitionCalls(
        fastify.storage,
        { kind: 'ids', ids: [call.id] },
        (locked) => {
          const update = mapTwilioStatus(callStatus, callDuration, locked.answeredBy);
          return update && { update, extra: learnsSid ? { providerCallId: callSid } : {} };
        },
        {
          now: fastify.now(),
          source: 'provider',
          queuedCallTtlMs: fastify.concurrency.limits.queuedCallTtlHours * 3600_000,
          // The agent's runtime had the call: its terminal event waits a little for the runtime's result.
          resultWaitMs: fastify.config.AGENT_RESULT_WAIT_SECONDS * 1000,
        },
      );
      recorded = (applied?.steps.length ?? 0) > 0;
    }
    if (learnsSid && !recorded) {
      await fastify.storage.calls.recordProviderCallId(call.id, callSid);
    }
    return reply.code(204).send();
  });

  /**
   * Asynchronous answering-machine detection's verdict (AsyncAmdStatusCallback: CallSid, AnsweredBy,
   * MachineDetectionDuration), for calls dialled with the agent's voicemail detection on (`voicemail` in the URL is
   * its policy then). A person, or a verdict that could not tell, is recorded and the call goes on with the agent. A
   * machine is recorded (the status callback of its end then fails the call with reason voicemail), and the live call
   * is changed: redirected to TwiML that says the agent's message and hangs up, or hung up.
   */
  fastify.post(`${callbackPath}/amd`, async (request, reply) => {
    const form = formOf(request);
    const callSid = form.get('CallSid') || null;
    const policy = VOICEMAIL_POLICIES.find((p) => p === (request.query as { voicemail?: unknown }).voicemail);
    if (callSid === null || policy === undefined || policy === 'off')
      throw fastify.httpErrors.badRequest('Not an answering-machine verdict of a call with voicemail detection');
    const call = await findCall(request, callSid);
    // A late verdict of an earlier attempt must not be recorded on the next one.
    if (!isCurrentAttempt(request, call)) return reply.code(204).send();
    const answeredBy = answeredByOf(form.get('AnsweredBy') ?? '');
    if (answeredBy !== 'machine') {
      await fastify.storage.calls.recordAnsweredBy(call.id, call.attempt, { answeredBy, voicemailLeft: null });
      return reply.code(204).send();
    }
    const text = policy === 'leave_message' ? await messageFor(call) : null;
    // Recorded before the call is changed: the status callback of the hang-up that follows must find it.
    if (
      !(await fastify.storage.calls.recordAnsweredBy(call.id, call.attempt, {
        answeredBy,
        voicemailLeft: text !== null,
      }))
    )
      return reply.code(204).send(); // over already (the machine hung up first): nothing to change
    try {
      await (
        await liveCallDialer(call)
      ).updateCall(callSid, text !== null ? { twiml: voicemailTwiml(text) } : { status: 'completed' });
    } catch (error) {
      // The call is over, or the carrier is away: no message was left. The call still ends on the machine (when the
      // agent or the machine hangs up) as failed with reason voicemail.
      request.log.error({ err: error, callId: call.id }, 'could not change the call answered by a machine');
      if (text !== null)
        await fastify.storage.calls.recordAnsweredBy(call.id, call.attempt, { answeredBy, voicemailLeft: false });
    }
    return reply.code(204).send();
  });

  /** The agent's message for this call as it is now, ready to say; null when the agent has none to leave. */
  async function messageFor(call: Call): Promise<string | null> {
    const agent = await fastify.storage.accounts.findAgentById(call.agentId);
    return voicemailText(agent?.voicemailMessage ?? null, call.name);
  }

  /** Changes to a live call go through the dialer it was dialled with: its account's carrier's, or the environment's. */
  async function liveCallDialer(call: Call): Promise<TwilioDialer> {
    const dialer = await fastify.dialers.dialerOf(call, fastify.storage);
    if (!(dialer instanceof TwilioDialer) || dialer.kind !== options.api.kind)
      throw new Error(`the call's dialer cannot change live ${name} calls`);
    return dialer;
  }

  fastify.post(`${callbackPath}/twiml`, async (request, reply) => {
    const call = await findCall(request, formOf(request).get('CallSid') || null);
    // Already over here (canceled, or its dial was given up on): nobody should be connected to the agent.
    const twiml =
      isTerminal(call.status) || !isCurrentAttempt(request, call) ? HANGUP : await handOffTwiml(request, call);
    return reply.code(200).type('text/xml; charset=utf-8').send(twiml);
  });

  /** The TwiML that hands the call to the agent's runtime as the agent says: a media stream or a SIP destination. */
  async function handOffTwiml(request: FastifyRequest, call: Call): Promise<string> {
    const agent = await fastify.storage.accounts.findAgentById(call.agentId);
    const token = await fastify.contextTokens.sign(call.id, call.attempt);
    if (agent?.handoff === 'sip' && agent.sipUri) {
      const target = sipTarget(agent.sipUri, handOffPairs('sip', call, staticPairs(agent.sipHeaders, 'sip'), token));
      if (target.dropped.length > 0)
        request.log.warn(
          { callId: call.id, dropped: target.dropped, headersLength: target.headersLength },
          `SIP hand-off: headers left out to stay within ${name}'s limit`,
        );
      return sipTwiml(target.uri);
    }
    const streamUrl = agent?.streamUrl ?? options.agentStreamUrl;
    if (!streamUrl) {
      request.log.error({ callId: call.id, agentId: call.agentId }, 'no stream URL for the agent: the call is hung up');
      return HANGUP;
    }
    return streamTwiml(streamUrl, handOffPairs('stream', call, staticPairs(agent?.streamParameters, 'stream'), token));
  }
}
