// Twilio's callbacks (status, TwiML, the answering-machine verdict: twilio-compatible.ts) under /telephony/twilio,
// each checked against X-Twilio-Signature, keyed with the auth token of the Twilio account the call was dialled with
// (an account's own carrier, or the environment's).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { TWILIO_API } from '../../dispatch/twilio-dialer.js';
import { headerOf, twilioCompatibleRoutes, type TwilioParams } from './twilio-compatible.js';

export type { TwilioParams } from './twilio-compatible.js';
export { escapeXml, sipTwiml, streamTwiml, voicemailTwiml } from './twiml.js';

export interface TwilioRoutesOptions {
  /** The address Twilio was given for callbacks; signatures cover it, so it is never rebuilt from Host headers. */
  publicBaseUrl: string;
  /** wss:// media-stream address of the voice-agent runtime, for agents without their own hand-off. */
  agentStreamUrl?: string | undefined;
}

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

export default async function twilioRoutes(fastify: FastifyInstance, options: TwilioRoutesOptions) {
  await twilioCompatibleRoutes(fastify, {
    api: TWILIO_API,
    publicBaseUrl: options.publicBaseUrl,
    agentStreamUrl: options.agentStreamUrl,
    isSigned: (authToken, headers, url, params) =>
      isValidTwilioSignature(authToken, headerOf(headers, 'x-twilio-signature'), url, params),
  });
}
