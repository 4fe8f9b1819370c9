// The API's listener, built for Fastify's serverFactory: HTTPS whose port answers a plain-HTTP request with the JSON
// 400 "HTTPS is required" and Connection: close (as nginx's 497 does) instead of dropping it; or plain HTTP when a
// TLS-terminating proxy sits in front (the https-only plugin then checks X-Forwarded-Proto).
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { FastifyServerFactory } from 'fastify';
import { errorMessage } from '../schemas/error-codes.js';

type TlsMaterial = Pick<https.ServerOptions, 'key' | 'cert'>;

/** A TLS connection starts with a handshake record (content type 22); an HTTP request starts with a method name. */
const TLS_HANDSHAKE = 0x16;
/** A connection that sends nothing is dropped after as long as tls.Server allows a handshake (its default). */
const FIRST_BYTE_TIMEOUT_MS = 120_000;
/** How long the refused request's head may take to arrive, and how long its rest is read after the answer. */
const PLAIN_TIMEOUT_MS = 10_000;
const PLAIN_HEAD_LIMIT = 16 * 1024;

const REFUSAL_BODY = JSON.stringify({ success: false, error: errorMessage('HTTPS_REQUIRED') });
export const PLAIN_HTTP_REFUSAL =
  'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n' +
  `Content-Length: ${Buffer.byteLength(REFUSAL_BODY)}\r\nConnection: close\r\n\r\n${REFUSAL_BODY}`;

/** Answers once the request's head is in (or too long, or too slow), then reads on until the client closes. */
function refusePlainHttp(socket: Socket) {
  let head = '';
  const answer = () => {
    clearTimeout(timer);
    socket.removeListener('data', onData);
    socket.end(PLAIN_HTTP_REFUSAL);
    // Closing with unread bytes (a request body) would reset the connection, and the client could lose the answer.
    socket.setTimeout(PLAIN_TIMEOUT_MS, () => socket.destroy());
    socket.resume();
  };
  const onData = (chunk: Buffer) => {
    head += chunk.toString('latin1');
    if (/\r?\n\r?\n/.test(head) || head.length > PLAIN_HEAD_LIMIT) answer();
  };
  const timer = setTimeout(answer, PLAIN_TIMEOUT_MS);
  socket.on('data', onData);
  socket.resume();
}

/**
 * https.Server that looks at the first byte of each connection before TLS does: a handshake goes on to TLS (the
 * documented way, by emitting 'connection' with the socket), anything else is plain HTTP and gets the refusal.
 */
class HttpsRefusingPlainHttp extends https.Server {
  readonly #sorted = new WeakSet<Socket>();
  readonly #waiting = new Set<Socket>();

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'connection') return super.emit(event as string, ...args);
    const socket = args[0] as Socket;
    if (this.#sorted.has(socket)) return super.emit(event, socket);
    this.#sort(socket);
    return true;
  }

  #sort(socket: Socket) {
    this.#waiting.add(socket);
    // A reset before the first byte (or, later, one TLS has not seen yet) must not become an unhandled error.
    socket.on('error', () => socket.destroy());
    socket.once('close', () => this.#waiting.delete(socket));
    socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.unshift(chunk);
      socket.setTimeout(0);
      this.#waiting.delete(socket);
      this.#sorted.add(socket);
      if (chunk[0] === TLS_HANDSHAKE) this.emit('connection', socket);
      else refusePlainHttp(socket);
    });
  }

  /** A connection that has sent nothing yet is idle too (shutdown closes idle connections). */
  override closeIdleConnections() {
    super.closeIdleConnections();
    for (const socket of this.#waiting) socket.destroy();
  }
}

/** For Fastify's serverFactory: the listener, with what Fastify sets on the servers it makes itself. */
export function apiServerFactory(tls: TlsMaterial | null): FastifyServerFactory {
  return (handler, options) => {
    const server = tls ? new HttpsRefusingPlainHttp(tls, handler) : http.createServer(handler);
    // An unknown Expect header would get Node's bare 417: ignore the expectation (RFC 9110 allows it) and answer.
    server.on('checkExpectation', handler);
    server.keepAliveTimeout = options.keepAliveTimeout as number;
    server.requestTimeout = options.requestTimeout as number;
    server.setTimeout(options.connectionTimeout as number);
    if ((options.maxRequestsPerSocket as number) > 0)
      server.maxRequestsPerSocket = options.maxRequestsPerSocket as number;
    return server;
  };
}
