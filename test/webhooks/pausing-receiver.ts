// A webhook receiver in its own process whose event loop stops for PAUSE_MS after each burst (a garbage-collection
// pause, a blocked thread), longer than its keep-alive timeout: the keep-alive race of a real receiver, on demand.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const PAUSE_MS = Number(process.env.PAUSE_MS ?? 6_000);
/** A burst is over when no request came for this long. */
const QUIET_MS = 300;

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.end();
    process.send?.({ request: req.headers['webhook-id'] });
  });
});
// Shorter than the pause: when the loop runs again, the keep-alive timers of the burst's connections have expired.
server.keepAliveTimeout = Number(process.env.KEEP_ALIVE_TIMEOUT_MS ?? 4_000);

let quiet: NodeJS.Timeout | undefined;
server.on('request', () => {
  clearTimeout(quiet);
  quiet = setTimeout(() => {
    // Blocked in the check phase: the next turn of the loop runs its (expired) timers before it reads the sockets,
    // so a request written during the pause meets a connection the server closes unread (a reset).
    setImmediate(() => {
      process.send?.({ paused: PAUSE_MS });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, PAUSE_MS);
      process.send?.({ resumed: true });
    });
  }, QUIET_MS);
});

server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
