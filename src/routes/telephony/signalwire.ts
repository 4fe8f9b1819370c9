// SignalWire's callbacks under /telephony/signalwire: its Compatibility API (LaML) sends the status callbacks, TwiML
// fetches and answering-machine verdicts Twilio sends (twilio-compatible.ts), each checked by the SDK,
// @signalwire/compatibility-api's validateRequest, against X-SignalWire-Signature keyed with the project's signing key.
import type { FastifyInstance } from 'fastify';
import { SIGNALWIRE_API } from '../../dispatch/signalwire-dialer.js';
import { signalWireSdk } from './signalwire-sdk.js';
import { headerOf, twilioCompatibleRoutes } from './twilio-compatible.js';

export interface SignalWireRoutesOptions {
  /** The address SignalWire was given for callbacks; signatures cover it, so it is never rebuilt from Host headers. */
  publicBaseUrl: string;
  /** wss:// media-stream address of the voice-agent runtime, for agents without their own hand-off. */
  agentStreamUrl?: string | undefined;
}

export default async function signalWireRoutes(fastify: FastifyInstance, options: SignalWireRoutesOptions) {
  await twilioCompatibleRoutes(fastify, {
    api: SIGNALWIRE_API,
    publicBaseUrl: options.publicBaseUrl,
    agentStreamUrl: options.agentStreamUrl,
    // `signingKey`: the project's signing key (its dashboard's API page), of the project the call was dialled with.
    isSigned(signingKey, headers, url, params) {
      // X-Twilio-Signature is the alias SignalWire's Compatibility callbacks may carry; the SDK's own middleware reads
      // it after X-SignalWire-Signature too. Either is checked with the signing key.
      const signature = headerOf(headers, 'x-signalwire-signature') ?? headerOf(headers, 'x-twilio-signature');
      // The last argument keeps the SDK from console.warn-ing about a refused body that looks like a RELAY request.
      // The SDK is loaded on the first callback: these routes are registered wherever an account may use SignalWire.
      return (
        signature !== undefined && signalWireSdk().RestClient.validateRequest(signingKey, signature, url, params, true)
      );
    },
  });
}
