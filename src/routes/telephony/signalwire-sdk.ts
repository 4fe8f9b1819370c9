// @signalwire/compatibility-api, loaded from node_modules when SignalWire is the carrier rather than bundled into every
// start: the SDK is a whole REST client (megabytes, a quarter of a second and some 30 MB to load) around the one
// function used, its request check. Typed here: its own typings lie outside its "exports" map, which TypeScript's
// NodeNext resolution respects, so they cannot be found (TS7016).
import { createRequire } from 'node:module';

export interface SignalWireSdk {
  RestClient: {
    /**
     * Whether `signature` (X-SignalWire-Signature) is the signing key's over `url` (as SignalWire was given it, tried
     * with and without its default port) and the POST `params`. `suppressWarning` silences its console warning about
     * a refused body that looks like a RELAY request (lib/webhooks/webhooks.js).
     */
    validateRequest(
      signingKey: string,
      signature: string,
      url: string,
      params: Record<string, string | readonly string[]>,
      suppressWarning?: boolean,
    ): boolean;
  };
}

let sdk: SignalWireSdk | undefined;

/** The SDK, loaded on first use. */
export function signalWireSdk(): SignalWireSdk {
  sdk ??= createRequire(import.meta.url)('@signalwire/compatibility-api') as SignalWireSdk;
  return sdk;
}
