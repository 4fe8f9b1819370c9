// Kept-alive connections to a receiver: none is kept idle past the receiver's Keep-Alive hint, and a receiver that
// closes one just as an event is written on it (its keep-alive timeout crossing our reuse) costs no failed attempt.
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { WebhookSender, type AttemptResult } from '../../src/webhooks/sender.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { forkChild, stopChild } from '../helpers/child-processes.js';
import { createTenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const RECEIVER = fileURLToPath(new URL('./pausing-receiver.ts', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('idle connections', () => {
  it("are closed before the receiver's Keep-Alive: timeout, and reused within it", async () => {
    let connections = 0;
    // The server would keep the connection for a minute; only the hint it sends says 2 s.
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204, { connection: 'keep-alive', 'keep-alive': 'timeout=2' }).end());
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const sender = new WebhookSender({ allowPrivateTargets: true });
    stops.push(async () => {
      sender.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const target = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, secret: SECRET };

    expect((await sender.send(target, 'a', '{}', new Date())).status).toBe(204);
    await sleep(100);
    expect((await sender.send(target, 'b', '{}', new Date())).status).toBe(204);
    expect(connections).toBe(1);
    // Past the hint (less its 1 s margin): a new connection, not one the receiver may be closing.
    await sleep(2_500);
    expect((await sender.send(target, 'c', '{}', new Date())).status).toBe(204);
    expect(connections).toBe(2);
  });
});

interface PausingReceiver {
  port: number;
  requests: string[];
  pauses: number;
  child: ChildProcess;
}

/** The receiver of pausing-receiver.ts in its own process, stopped after the file's tests. */
async function startPausingReceiver(): Promise<PausingReceiver> {
  const child = forkChild(RECEIVER, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, PAUSE_MS: '6000', KEEP_ALIVE_TIMEOUT_MS: '4000' },
    stdio: 'ignore',
  });
  stops.push(async () => {
    await stopChild(child, 'SIGKILL');
  });
  const receiver: PausingReceiver = { port: 0, requests: [], pauses: 0, child };
  child.on('message', (message: { port?: number; request?: string; paused?: number }) => {
    if (message.port) receiver.port = message.port;
    if (message.request) receiver.requests.push(message.request);
    if (message.paused) receiver.pauses++;
  });
  await waitFor(
    () => receiver.port,
    (port) => port > 0,
    20_000,
  );
  return receiver;
}

describe('a receiver that pauses longer than its keep-alive timeout', () => {
  it('gets every event on the first recorded attempt: a request reset on a reused connection is sent again at once', async () => {
    const receiver = await startPausingReceiver();
    const attempts: AttemptResult[] = [];
    const { app } = await buildTestApp({
      env: {
        DISPATCH_ENABLED: 'true',
        WEBHOOK_DELIVERY_ENABLED: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        SIMULATED_RING_MS: '10',
        SIMULATED_TALK_MS: '10',
      },
      jobs: { webhooks: { onAttempt: (_outcome, result) => attempts.push(result) } },
    });
    const tenant = await createTenant(app.storage);
    await setWebhook(app.storage, tenant.accountId, `http://127.0.0.1:${receiver.port}/hooks`, {
      allowPrivate: true,
      now: app.now(),
    });

    const CALLS_PER_BURST = 3;
    for (let burst = 1; burst <= 3; burst++) {
      for (let i = 0; i < CALLS_PER_BURST; i++) expect((await trigger(app, tenant.key)).statusCode).toBe(200);
      // call.started and call.completed of each call.
      await waitFor(
        () => receiver.requests.length,
        (n) => n >= burst * CALLS_PER_BURST * 2,
        30_000,
      );
      // The receiver stops right after the burst; the next burst is written on the kept-alive connections while
      // it is stopped (well within their idle time), and meets them closed when it runs again.
      await waitFor(
        () => receiver.pauses,
        (n) => n >= burst,
        10_000,
      );
      await sleep(1_000);
    }

    const deliveries = await prismaOf(app).webhookDelivery.findMany({
      where: { call: { accountId: tenant.accountId } },
      include: { attempts: true },
    });
    expect(deliveries).toHaveLength(3 * CALLS_PER_BURST * 2);
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({ status: 'succeeded', attemptCount: 1 });
      expect(delivery.attempts.map((a) => [a.attemptNumber, a.responseStatus, a.error])).toEqual([[1, 200, null]]);
    }
    // The race did happen (otherwise this test proves nothing), and each time the retry on a new connection won.
    expect(attempts.filter((a) => a.reconnected).length).toBeGreaterThan(0);
  }, 90_000);
});
