// Twilio for tests: the stand-in of a Twilio-like carrier (twilio-compatible-stand-in.ts) as Twilio, under
// /2010-04-01 with call sids CA..., its callbacks signed with Twilio's own SDK as Twilio sends them; and the
// environment of an app that dials through it.
import { randomBytes } from 'node:crypto';
import twilio from 'twilio';
import type { App } from '../../src/app.js';
import { PUBLIC, STREAM, TwilioCompatibleStandIn } from './twilio-compatible-stand-in.js';

export {
  AGENT_PHONE,
  MediaStream,
  PUBLIC,
  REFUSED_TO,
  STREAM,
  type AnsweredCall,
} from './twilio-compatible-stand-in.js';

export const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
export const TOKEN = 'test-token';

/** Twilio's Calls resource as far as the dialer uses it. */
export class TwilioStandIn extends TwilioCompatibleStandIn {
  constructor() {
    super({
      apiPath: '/2010-04-01',
      accountSid: ACCOUNT_SID,
      token: TOKEN,
      newSid: () => `CA${randomBytes(16).toString('hex')}`,
      sidPattern: /^CA[0-9a-f]{32}$/,
      errorInfo: (code) => `https://www.twilio.com/docs/errors/${code}`,
      sign: (url, params) => ({ 'x-twilio-signature': signLikeTwilio(TOKEN, url, params) }),
    });
  }
}

/** Signs a callback as Twilio does (its SDK's own signature function). */
export function signLikeTwilio(token: string, url: string, params: Record<string, string>): string {
  return twilio.getExpectedTwilioSignature(token, url, params);
}

/** POSTs a callback to `/telephony/twilio/<kind>?call_id=...` (plus `query`), signed unless told otherwise. */
export function twilioCallback(
  app: App,
  kind: 'status' | 'twiml' | 'amd',
  callId: string,
  params: Record<string, string>,
  options: { query?: string; signature?: string | null; headers?: Record<string, string> } = {},
) {
  const path = `/telephony/twilio/${kind}?call_id=${callId}${options.query ?? ''}`;
  const sig = options.signature === undefined ? signLikeTwilio(TOKEN, `${PUBLIC}${path}`, params) : options.signature;
  return app.inject({
    method: 'POST',
    url: path,
    payload: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(sig === null ? {} : { 'x-twilio-signature': sig }),
      ...options.headers,
    },
  });
}

/** The environment of an app that dials through the stand-in. */
export function twilioEnv(apiBaseUrl: string): Record<string, string> {
  return {
    DIALER: 'twilio',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: TOKEN,
    TWILIO_API_BASE_URL: apiBaseUrl,
    PUBLIC_BASE_URL: PUBLIC,
    AGENT_STREAM_URL: STREAM,
    DISPATCH_ENABLED: 'true',
  };
}
