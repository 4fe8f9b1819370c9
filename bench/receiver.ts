// The webhook receiver of the bench, on 127.0.0.1 in the runner's process: answers 200 (at once, or after a random
// delay as a customer's server would: `answerAfterMs`), counts everything, and while a scenario watches, notes when
// each call.started (by call_id) or each awaited webhook-id arrived (when its body was in, before any delay).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { wallNow } from './load.js';

export interface Receiver {
  url: string;
  total: number;
  /** call_id -> arrival of its call.started, while watchStarted is on. */
  started: Map<string, number>;
  watchStarted: boolean;
  /** Arrival times of the awaited webhook-ids (deliveries pre-created by the throughput scenario). */
  awaited: Set<string> | null;
  arrivals: number[];
  /** Answer each request after a random delay in [min, max] ms (uniform); null: at once. */
  answerAfterMs: [min: number, max: number] | null;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = wallNow();
      receiver.total++;
      const id = req.headers['webhook-id'];
      if (receiver.awaited && typeof id === 'string' && receiver.awaited.delete(id)) receiver.arrivals.push(at);
      if (receiver.watchStarted) {
        const event = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: { call_id: string } };
        if (event.type === 'call.started' && !receiver.started.has(event.data.call_id))
          receiver.started.set(event.data.call_id, at);
      }
      const answer = () => {
        res.writeHead(200, { 'content-length': '0' });
        res.end();
      };
      const delay = receiver.answerAfterMs;
      if (delay) setTimeout(answer, delay[0] + Math.random() * (delay[1] - delay[0]));
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    total: 0,
    started: new Map(),
    watchStarted: false,
    awaited: null,
    arrivals: [],
    answerAfterMs: null,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  return receiver;
}
