// Twilio's callbacks: signed status callbacks that move calls along, and the TwiML that hands answered calls to the agent.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Call } from '../../generated/prisma/client.js';
import { applyCallUpdate } from '../../calls/transition.js';
import { isTerminal } from '../../domain/call-lifecycle.js';
import { isUuid } from '../../domain/ids.js';
import { mapTwilioStatus, trimSlash } from '../../dispatch/twilio-dialer.js';
import { useHttpErrors } from '../../http-errors.js';
import { findCallById, recordProviderCallId } from '../../storage/calls.js';

export interface TwilioRoutesOptions {
  authToken: string;
  /** The address Twilio was given for callbacks; signatures cover it, so it is never rebuilt from Host headers. */
  publicBaseUrl: string;
  /** wss:// media-stream address of the voice-agent runtime. */
  agentStreamUrl: string;
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
  // Control characters are not allowed in XML 1.0 at all: Twilio would reject the whole document. Tab, LF and CR are,
  // but a parser turns them into spaces inside an attribute value; as character references they survive (Twilio's SDK
  // writes them the same way). NEL and LS too: XML 1.1 parsers treat them as line ends.
  return (
    value
      // eslint-disable-next-line no-control-regex -- the control characters are what this removes
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
      .replace(/[&<>"'\t\n\r\u0085\u2028]/g, (c) => XML_ENTITIES[c]!)
  );
}
const XML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\t': '&#x9;',
  '\n': '&#xA;',
  '\r': '&#xD;',
  '\u0085': '&#x85;',
  '\u2028': '&#x2028;',
};

/** The TwiML that connects an answered call to the voice-agent runtime, with what the agent needs to know. */
export function connectTwiml(agentStreamUrl: string, call: Pick<Call, 'id' | 'agentId' | 'name' | 'email'>): string {
  const parameters: [string, string | null][] = [
    ['agent_id', call.agentId],
    ['call_id', call.id],
    ['name', call.name],
    ['email', call.email],
  ];
  const tags = parameters
    .filter((p): p is [string, string] => p[1] !== null)
    .map(([name, value]) => `<Parameter name="${name}" value="${escapeXml(value)}"/>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${escapeXml(agentStreamUrl)}">${tags}</Stream></Connect></Response>`;
}

const HANGUP = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

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
    const call = typeof callId === 'string' && isUuid(callId) ? await findCallById(fastify.prisma, callId) : null;
    if (!call || (call.providerCallId !== null && callSid !== null && call.providerCallId !== callSid))
      throw fastify.httpErrors.notFound('Call not found');
    return call;
  }

  fastify.post('/telephony/twilio/status', async (request, reply) => {
    const form = formOf(request);
    const callSid = form.get('CallSid') || null;
    const call = await findCall(request, callSid);
    // The callback can beat the dispatcher's own write of the sid (or follow a dial that timed out): record it here.
    const learnsSid = call.providerCallId === null && callSid !== null;
    const update = mapTwilioStatus(form.get('CallStatus') ?? '', form.get('CallDuration') ?? undefined);
    let recorded = false;
    if (update) {
      const { steps } = await applyCallUpdate(
        fastify.prisma,
        call.id,
        update,
        { now: fastify.now(), source: 'provider' },
        learnsSid ? { providerCallId: callSid } : {},
      );
      recorded = steps.length > 0;
    }
    if (learnsSid && !recorded) {
      await recordProviderCallId(fastify.prisma, call.id, callSid);
    }
    return reply.code(204).send();
  });

  fastify.post('/telephony/twilio/twiml', async (request, reply) => {
    const call = await findCall(request, formOf(request).get('CallSid') || null);
    // Already over here (canceled, or its dial was given up on): nobody should be connected to the agent.
    const twiml = isTerminal(call.status) ? HANGUP : connectTwiml(options.agentStreamUrl, call);
    return reply.code(200).type('text/xml; charset=utf-8').send(twiml);
  });
}
