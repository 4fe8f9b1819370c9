// The receiver's answer as the delivery log keeps it (issue 24.3): the first 2 KB of the body, cut on a UTF-8
// boundary, and no more read from a long body than that: a 1 MB answer stores 2 KB, and one that never ends does not
// hold the attempt until its timeout. Through the real sender and, for the stored row, the real worker and database.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { keptBodyText, RESPONSE_BODY_DRAINED, RESPONSE_BODY_KEPT, WebhookSender } from '../../src/webhooks/sender.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** A server on 127.0.0.1 answering every request with `answer`; counts connections and the body bytes it wrote. */
async function server(answer: (res: http.ServerResponse, written: (n: number) => void) => void) {
  const state = { connections: 0, written: 0, url: '' };
  const srv = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res, (n) => (state.written += n)));
  });
  srv.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hooks`;
  stops.push(async () => {
    srv.closeAllConnections();
    await new Promise((resolve) => srv.close(resolve));
  });
  return state;
}

function sender() {
  const s = new WebhookSender({ allowPrivateTargets: true, timeoutMs: 60_000 });
  stops.push(async () => s.close());
  return s;
}

describe('keptBodyText', () => {
  it('leaves out whole a character the 2 KB limit cut, and drops NUL', () => {
    const euro = Buffer.from('€'); // 3 bytes
    const body = Buffer.concat([Buffer.alloc(RESPONSE_BODY_KEPT - 1, 'a'), euro]);
    const cut = body.subarray(0, RESPONSE_BODY_KEPT);
    expect(keptBodyText(cut, true)).toBe('a'.repeat(RESPONSE_BODY_KEPT - 1));
    // Not cut: a body that ends as sent is kept as it is.
    expect(keptBodyText(Buffer.from('ok €'), false)).toBe('ok €');
    expect(keptBodyText(Buffer.from('a\0b'), false)).toBe('ab');
    expect(keptBodyText(Buffer.alloc(0), true)).toBe('');
    // A four-byte character cut after one, two or three of its bytes.
    for (const keep of [1, 2, 3]) {
      const emoji = Buffer.from('x😀');
      expect(keptBodyText(emoji.subarray(0, 1 + keep), true)).toBe('x');
    }
    expect(keptBodyText(Buffer.from('x😀'), true)).toBe('x😀');
  });
});

describe('the sender', () => {
  it('keeps a small body whole, and reuses the connection', async () => {
    const s = await server((res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('<script>ok</script> ✓'));
    const send = sender();
    const first = await send.send({ url: s.url, secret: SECRET }, 'a', '{}', new Date());
    expect(first).toMatchObject({ status: 200, body: '<script>ok</script> ✓', bodyTruncated: false, error: null });
    expect((await send.send({ url: s.url, secret: SECRET }, 'b', '{}', new Date())).status).toBe(200);
    expect(s.connections).toBe(1);
  });

  it('keeps the first 2 KB of a 1 MB body, cut on a character boundary', async () => {
    // Two-byte characters after one ASCII byte: byte 2048 falls in the middle of one.
    const body = `x${'é'.repeat(512 * 1024)}`;
    const s = await server((res) =>
      res.writeHead(500, { 'content-length': String(Buffer.byteLength(body)) }).end(body),
    );
    const result = await sender().send({ url: s.url, secret: SECRET }, 'a', '{}', new Date());
    expect(result.status).toBe(500);
    expect(result.bodyTruncated).toBe(true);
    expect(Buffer.byteLength(result.body!)).toBe(RESPONSE_BODY_KEPT - 1);
    expect(body.startsWith(result.body!)).toBe(true);
  });

  it('stops reading a body that never ends', async () => {
    const chunk = Buffer.alloc(16 * 1024, 'z');
    let stopped = false;
    const s = await server((res, written) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const more = () => {
        // Until the sender closes the connection: without the limit, this never ends.
        while (!res.destroyed && res.write(chunk)) written(chunk.length);
        if (res.destroyed) stopped = true;
        else res.once('drain', more);
      };
      res.on('close', () => (stopped = true));
      more();
    });
    const result = await sender().send({ url: s.url, secret: SECRET }, 'a', '{}', new Date());
    expect(result).toMatchObject({
      status: 200,
      error: null,
      bodyTruncated: true,
      body: 'z'.repeat(RESPONSE_BODY_KEPT),
    });
    // The server hears the close on a later turn of the event loop; on a loaded host that can take longer than any
    // fixed pause, so wait for it (a sender that kept reading would never close, and this would fail).
    await vi.waitFor(() => expect(stopped).toBe(true), { timeout: 15_000, interval: 20 });
    // What was written is bounded by the drain limit plus what the sockets' buffers held, not by any timeout.
    expect(s.written).toBeLessThan(RESPONSE_BODY_DRAINED + 8 * 1024 * 1024);
  });
});

describe('the worker', () => {
  it('stores 2 KB of a 1 MB answer with the attempt, and its latency', async () => {
    const body = 'y'.repeat(1024 * 1024);
    const s = await server((res) => res.writeHead(503, { 'content-length': String(body.length) }).end(body));
    const { app } = await buildTestApp({
      env: { WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
      jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
    });
    const tenant = await createTenant(app.storage);
    await setWebhook(app.storage, tenant.accountId, s.url, { allowPrivate: true, now: app.now() });
    const callId = callIdOf(await trigger(app, tenant.key));
    await applyCallUpdate(
      app.storage,
      callId,
      { kind: 'failed', reason: 'canceled' },
      { now: app.now(), source: 'operator' },
    );
    await app.deliveryWorker!.settle();
    const [attempt] = await prismaOf(app).webhookAttempt.findMany({ where: { delivery: { callId } } });
    expect(attempt).toMatchObject({
      responseStatus: 503,
      responseBody: 'y'.repeat(RESPONSE_BODY_KEPT),
      responseBodyTruncated: true,
    });
    expect(attempt!.durationMs).toBeGreaterThanOrEqual(0);
  });
});
