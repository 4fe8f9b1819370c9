// The SignalWire adapter of the dialer port: SignalWire's Compatibility API (LaML) is Twilio's Calls resource and
// callbacks under a space's own address, so this is the Twilio adapter pointed at the space and named for SignalWire.
import { TwilioDialer, type TwilioApi } from './twilio-dialer.js';

export const SIGNALWIRE_API: TwilioApi = {
  kind: 'signalwire',
  name: 'SignalWire',
  apiPath: '/api/laml/2010-04-01',
  callbackPath: '/telephony/signalwire',
};

export interface SignalWireDialerOptions {
  /** The space, https://<space>.signalwire.com (SIGNALWIRE_SPACE_URL). */
  spaceUrl: string;
  /** The project's id: the Calls resource's account and Basic auth's user. */
  projectId: string;
  /** An API token of the project: Basic auth's password. */
  token: string;
  /** This service's public https address: SignalWire calls back to it. */
  publicBaseUrl: string;
  /** Where the REST calls go instead of the space (a local stand-in in tests). */
  apiBaseUrl?: string;
  timeoutMs?: number;
}

/** Places and changes calls through a SignalWire space; its callbacks arrive under /telephony/signalwire. */
export class SignalWireDialer extends TwilioDialer {
  constructor(options: SignalWireDialerOptions) {
    super({
      accountSid: options.projectId,
      authToken: options.token,
      apiBaseUrl: options.apiBaseUrl ?? options.spaceUrl,
      publicBaseUrl: options.publicBaseUrl,
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      api: SIGNALWIRE_API,
    });
  }
}
