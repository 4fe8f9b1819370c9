// SignalWire's callbacks under /telephony/signalwire: its Compatibility API (LaML) sends the status callbacks, TwiML
// fetches and answering-machine verdicts Twilio sends (twilio-compatible.ts), each checked by the SDK,
// @signalwire/compatibility-api's validateRequest, against X-SignalWire-Signature keyed with the project's signing key.
import type { FastifyInstance } from 'fastify';
import { SIGNALWIRE_API } from '../../dispatch/signalwire-dialer.js';
import { signalWireSdk } from './signalwire-sdk.js';
import { headerOf, twilioCompatibleRoutes } from './twilio-compatible.js';

export interface SignalWireRoutesOptions {
  /** The project's signing key (its dashboard's API page): SignalWire signs callbacks with it, not an API token. */
  signingKey: string;
  /** The address SignalWire was given for callbacks; signatures cover it, so it is never rebuilt from Host headers. */
  publicBaseUrl: string;
  /** wss:// media-stream address of the voice-agent runtime, for agents without their own hand-off. */
  agentStreamUrl?: string | undefined;
}

export default async function signalWireRoutes(fastify: FastifyInstance, options: SignalWireRoutesOptions) {
  const { RestClient } = signalWireSdk();
  await twilioCompatibleRoutes(fastify, {
    api: SIGNALWIRE_API,
    publicBaseUrl: options.publicBaseUrl,
    agentStreamUrl: options.agentStreamUrl,
    isSigned(headers, url, params) {
      // X-Twilio-Signature is the alias SignalWire's Compatibility callbacks may carry; the SDK's own middleware reads
      // it after X-SignalWire-Signature too. Either is checked with the signing key.
      const signature = headerOf(headers, 'x-signalwire-signature') ?? headerOf(headers, 'x-twilio-signature');
      // The last argument keeps the SDK from console.warn-ing about a refused body that looks like a RELAY request.
      return signature !== undefined && RestClient.validateRequest(options.signingKey, signature, url, params, true);
    },
  });
}
