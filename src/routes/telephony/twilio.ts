// Twilio's callbacks: signed status callbacks that move calls along, the TwiML that hands answered calls to the agent's
// runtime (a media stream or SIP, docs/agent-runtime.md), and the answering-machine verdict, on which a machine is left
// the agent's message or hung up on.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
// The TwiML builder alone: the package's root would bring its whole REST client into the server's bundle (megabytes
// to load at every start) for one class. test/dispatch/voicemail.test.ts checks it is the root's twiml.VoiceResponse.
import VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import type { CallRow as Call } from '../../storage/index.js';
import { transitionCalls } from '../../calls/transition.js';
import { isTerminal } from '../../domain/call-lifecycle.js';
import { voicemailText } from '../../domain/voicemail.js';
import { answeredByOf, mapTwilioStatus, trimSlash, TwilioDialer } from '../../dispatch/twilio-dialer.js';
import { VOICEMAIL_POLICIES } from '../../../schemas/vocabulary.js';
import { useHttpErrors } from '../../http-errors.js';
import { isUuid } from '../../../schemas/uuid.js';
import type { HandoffPair } from '../../../schemas/agent-runtime.js';
import { handOffPairs, sipTarget, staticPairs } from '../../dispatch/hand-off.js';

export interface TwilioRoutesOptions {
  authToken: string;
  /** The address Twilio was given for callbacks; signatures cover it, so it is never rebuilt from Host headers. */
  publicBaseUrl: string;
  /** wss:// media-stream address of the voice-agent runtime, for agents without their own hand-off. */
  agentStreamUrl?: string | undefined;
}

export type TwilioParams = Record<string, string | readonly string[]>;

/**
 * X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, over the URL Twilio called followed by every POST
 * parameter as name + value, sorted by name (a repeated name's values sorted too, as Twilio's own helpers do).
 */
export function twilioSignature(authToken: string, url: string, params: TwilioParams): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name]!;
    for (const v of typeof value === 'string' ? [value] : [...value].sort()) data += name + v;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

export function isValidTwilioSignature(
  authToken: string,
  signature: string | undefined,
  url: string,
  params: TwilioParams,
): boolean {
  if (!signature) return false;
  const expected = Buffer.from(twilioSignature(authToken, url, params));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function escapeXml(value: string): string {
  // Control characters, noncharacters and unpaired surrogates are not allowed in XML 1.0 at all: Twilio would reject
  // the whole document. Markup and quotes are entities. Every other character a parser would not hand back as written
  // is a character reference: tab, LF and CR (turned into spaces inside an attribute value), and the whole class of
  // line and paragraph separators and C1 controls an XML 1.1 parser normalises or refuses (DEL, NEL and the rest of
  // U+007F-U+009F, LS U+2028, PS U+2029). Twilio's SDK references only tab, LF and CR; a reference is read back the
  // same by every parser.
  return (
    value
      // eslint-disable-next-line no-control-regex -- the control characters are what this removes
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/gu, '')
      .replace(/[&<>"']/g, (c) => XML_ENTITIES[c]!)
      .replace(/[\t\n\r\u007F-\u009F\u2028\u2029]/g, (c) => `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`)
  );
}
const XML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * The TwiML that connects an answered call to the voice-agent runtime's media stream with what the hand-off carries
 * (src/dispatch/hand-off.ts), in order. Written here rather than by Twilio's builder: its builder writes line and
 * paragraph separators raw, which a parser reads back as spaces (test/dispatch/twiml-escape.test.ts).
 */
export function streamTwiml(streamUrl: string, parameters: readonly HandoffPair[]): string {
  const tags = parameters
    .map(({ name, value }) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${escapeXml(streamUrl)}">${tags}</Stream></Connect></Response>`;
}

/** The TwiML that bridges an answered call to a SIP destination (its headers already in the URI: sipTarget). */
export function sipTwiml(uri: string): string {
  const response = new VoiceResponse();
  response.dial().sip(uri);
  return response.toString();
}

const HANGUP = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

/** The TwiML that leaves a message on a machine and hangs up (Twilio's own builder escapes the text). */
export function voicemailTwiml(text: string): string {
  const response = new VoiceResponse();
  response.say(text);
  response.hangup();
  return response.toString();
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

export default async function twilioRoutes(fastify: FastifyInstance, options: TwilioRoutesOptions) {
  const publicBaseUrl = trimSlash(options.publicBaseUrl);
  // Twilio is not an API client: its refusals are HTTP errors, not codes of the /api/v1 table.
  await useHttpErrors(fastify);

  // Only this scope reads forms: the public API stays JSON-only.
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, new URLSearchParams(body as string));
  });

  // Before anything is looked up or changed; request.url is the path and query exactly as Twilio sent them.
  fastify.addHook('preHandler', async (request) => {
    const header = request.headers['x-twilio-signature'];
    const signature = Array.isArray(header) ? undefined : header;
    if (
      !isValidTwilioSignature(options.authToken, signature, `${publicBaseUrl}${request.url}`, paramsOf(formOf(request)))
    ) {
      request.log.warn({ path: request.url.split('?')[0] }, 'rejected a Twilio callback: missing or invalid signature');
      throw fastify.httpErrors.forbidden('Invalid Twilio signature');
    }
  });

  /** The call named by call_id, provided it is the one Twilio calls CallSid (once we know its sid). */
  async function findCall(request: FastifyRequest, callSid: string | null): Promise<Call> {
    const callId = (request.query as { call_id?: unknown }).call_id;
    const call = typeof callId === 'string' && isUuid(callId) ? await fastify.storage.calls.findCallById(callId) : null;
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

  fastify.post('/telephony/twilio/status', async (request, reply) => {
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
  fastify.post('/telephony/twilio/amd', async (request, reply) => {
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
      await twilioDialer().updateCall(
        callSid,
        text !== null ? { twiml: voicemailTwiml(text) } : { status: 'completed' },
      );
    } catch (error) {
      // The call is over, or Twilio is away: no message was left. The call still ends on the machine (when the agent
      // or the machine hangs up) as failed with reason voicemail.
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

  /** Changes to live calls go through the process's dialer, which is Twilio's wherever these routes are registered. */
  function twilioDialer(): TwilioDialer {
    if (!(fastify.dialer instanceof TwilioDialer)) throw new Error('the dialer cannot change live Twilio calls');
    return fastify.dialer;
  }

  fastify.post('/telephony/twilio/twiml', async (request, reply) => {
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
          "SIP hand-off: headers left out to stay within Twilio's limit",
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
