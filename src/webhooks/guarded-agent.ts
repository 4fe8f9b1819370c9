// The sender's agents when private targets are not allowed: every address a connection would reach is put to the
// one address policy (isPrivateAddress, url-policy.ts) at connect time, an IP literal before connecting and a name's
// every resolved address inside the socket's lookup (DNS rebinding), so the sender refuses exactly what the URL check
// refuses. Through the documented http.Agent API (createConnection, and net's `lookup` connect option).
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { isPrivateAddress } from './url-policy.js';

type Callback = (error: Error | null, stream: Duplex) => void;
type Connect = (options: http.ClientRequestArgs, callback?: Callback) => unknown;

/** Why a connection was not made, as the delivery log shows it. */
function refusal(address: string, host: string | undefined): Error {
  const name = host && host !== address ? ` (${host})` : '';
  return Object.assign(
    new Error(
      `connecting to ${address}${name} is not allowed: a private, loopback, link-local or reserved address, which events are never sent to`,
    ),
    { code: 'ERR_WEBHOOK_ADDRESS_REFUSED' },
  );
}

/** A lookup that answers as `lookup` does, or with the refusal when any address it found is refused. */
function checkedLookup(lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, options, (error, address, family) => {
      if (error) return callback(error, address, family);
      // With `all` (net's happy eyeballs asks for it), every address: any one of them may be the one connected to.
      const found: (string | dns.LookupAddress)[] = Array.isArray(address) ? address : [address];
      for (const entry of found) {
        const ip = typeof entry === 'string' ? entry : entry.address;
        if (isPrivateAddress(ip)) return callback(refusal(ip, hostname), '', 0);
      }
      callback(null, address, family);
    });
  };
}

function guarded(options: http.ClientRequestArgs, callback: Callback | undefined, connect: Connect) {
  const host = options.host ?? undefined;
  if (host && isIP(host) && isPrivateAddress(host)) {
    // As http.Agent takes a connection that failed at once: the error through the callback, a socket never used.
    const socket = new net.Socket();
    if (callback) callback(refusal(host, undefined), socket);
    else process.nextTick(() => socket.destroy(refusal(host, undefined)));
    return socket;
  }
  return connect({ ...options, lookup: checkedLookup(options.lookup ?? dns.lookup) }, callback);
}

export class GuardedHttpAgent extends http.Agent {
  override createConnection(options: http.ClientRequestArgs, callback?: Callback) {
    return guarded(options, callback, (o, c) => super.createConnection(o, c)) as Duplex;
  }
}

export class GuardedHttpsAgent extends https.Agent {
  override createConnection(options: https.RequestOptions, callback?: Callback) {
    return guarded(options, callback, (o, c) => super.createConnection(o, c)) as Duplex;
  }
}
