// A webhook receiver on 127.0.0.1 for tests: records every request and answers as scripted; stopped when the file
// ends (file-end.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { atFileEnd } from './file-end.js';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides the answer to each request (default 200); a promise holds the answer back until it settles. */
  respond: (request: Received, index: number) => Answer | Promise<Answer>;
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  /**
   * Stops it now, dropping the connections it holds ('hang' answers included): what waits on them fails at once
   * instead of at its timeout. Otherwise it stops after the file's tests.
   */
  stop(): Promise<void>;
}

const running: (() => Promise<void>)[] = [];
atFileEnd(async () => {
  for (const stop of running.splice(0)) await stop();
});

async function reply(res: http.ServerResponse, answering: Answer | Promise<Answer>): Promise<void> {
  const answer = await answering;
  if (answer === 'hang') return;
  res.writeHead(answer.status, answer.headers ?? {});
  res.end(answer.body);
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const sockets = new Set<import('node:net').Socket>();
  const receiver: Receiver = {
    url: '',
    received: [],
    respond: () => ({ status: 200 }),
    stop: () => stop(),
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.received.length} of ${count} requests`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return receiver.received;
    },
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const request = { headers: req.headers, body, at: Date.now() };
      const index = receiver.received.push(request) - 1;
      void reply(res, receiver.respond(request, index));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  let stopped: Promise<void> | null = null;
  const stop = () =>
    (stopped ??= (async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    })());
  running.push(stop);
  return receiver;
}
