// SignalWire for tests: the stand-in of a Twilio-like carrier (twilio-compatible-stand-in.ts) as a SignalWire space's
// Compatibility API (LaML): the Calls resource under /api/laml/2010-04-01 with the project ID and an API token as Basic
// auth, call sids that are UUIDs, and callbacks signed as SignalWire signs them, with the project's signing key in
// X-SignalWire-Signature; and the environment of an app that dials through it.
import { createHmac, randomUUID } from 'node:crypto';
import type { App } from '../../src/app.js';
import { PUBLIC, STREAM, TwilioCompatibleStandIn } from './twilio-compatible-stand-in.js';

export { AGENT_PHONE, PUBLIC, REFUSED_TO, STREAM } from './twilio-compatible-stand-in.js';

export const PROJECT_ID = '6f1c2b7e-4a0d-4c59-9e3a-0b8d2f5a7c11';
export const SIGNALWIRE_TOKEN = `PT${'5e1f0a9b3c7d2e4f'.repeat(3)}`;
/** The project's signing key: distinct from its API tokens, it alone signs callbacks. */
export const SIGNING_KEY = 'PSK_0123456789abcdefABCDEF';
export const SPACE_URL = 'https://example.signalwire.com';

/** A SignalWire space's LaML Calls resource as far as the dialer uses it. */
export class SignalWireStandIn extends TwilioCompatibleStandIn {
  constructor() {
    super({
      apiPath: '/api/laml/2010-04-01',
      accountSid: PROJECT_ID,
      token: SIGNALWIRE_TOKEN,
      newSid: () => randomUUID(),
      sidPattern: /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/,
      errorInfo: (code) => `https://developer.signalwire.com/compatibility-api/reference/error-codes#${code}`,
      sign: (url, params) => ({ 'x-signalwire-signature': signLikeSignalWire(SIGNING_KEY, url, params) }),
    });
  }
}

/**
 * Signs a callback as SignalWire documents it ("Webhook Security": Twilio's scheme, keyed with the signing key):
 * base64 HMAC-SHA1 over the URL it was given followed by each POST parameter's name and value, sorted by name. Written
 * out here: the SDK exposes only the check, which the service runs.
 */
export function signLikeSignalWire(key: string, url: string, params: Record<string, string>): string {
  let data = url;
  for (const name of Object.keys(params).sort()) data += name + params[name];
  return createHmac('sha1', key).update(data, 'utf8').digest('base64');
}

/** POSTs a callback to `/telephony/signalwire/<kind>?call_id=...` (plus `query`), signed unless told otherwise. */
export function signalWireCallback(
  app: App,
  kind: 'status' | 'twiml' | 'amd',
  callId: string,
  params: Record<string, string>,
  options: { query?: string; signature?: string | null; headers?: Record<string, string> } = {},
) {
  const path = `/telephony/signalwire/${kind}?call_id=${callId}${options.query ?? ''}`;
  const sig =
    options.signature === undefined ? signLikeSignalWire(SIGNING_KEY, `${PUBLIC}${path}`, params) : options.signature;
  return app.inject({
    method: 'POST',
    url: path,
    payload: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(sig === null ? {} : { 'x-signalwire-signature': sig }),
      ...options.headers,
    },
  });
}

/** The environment of an app that dials through the stand-in (its REST calls to it instead of the space). */
export function signalWireEnv(apiBaseUrl: string): Record<string, string> {
  return {
    DIALER: 'signalwire',
    SIGNALWIRE_SPACE_URL: SPACE_URL,
    SIGNALWIRE_PROJECT_ID: PROJECT_ID,
    SIGNALWIRE_TOKEN,
    SIGNALWIRE_SIGNING_KEY: SIGNING_KEY,
    SIGNALWIRE_API_BASE_URL: apiBaseUrl,
    PUBLIC_BASE_URL: PUBLIC,
    AGENT_STREAM_URL: STREAM,
    DISPATCH_ENABLED: 'true',
  };
}
