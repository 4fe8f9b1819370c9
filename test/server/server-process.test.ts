// The real process: HTTPS with a self-signed certificate made once, JSON everywhere, health on the internal port,
// and a graceful exit 0 on SIGTERM.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freshDatabase } from '../helpers/database.js';
import { SERVER_COMMAND, httpGet, httpsRequest, startServer } from '../helpers/server-process.js';

/** Writes the parts over a plain TCP connection (a pause between them) and returns everything read until the server closes. */
function rawExchange(port: number, parts: string | string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.setTimeout(15_000, () => socket.destroy(new Error(`no close; got ${JSON.stringify(received)}`)));
    const [first, ...rest] = typeof parts === 'string' ? [parts] : parts;
    socket.write(first!);
    setTimeout(() => {
      for (const part of rest) socket.write(part);
    }, 50);
  });
}

describe('server process with DATABASE_URL', () => {
  it('serves HTTPS, keeps its certificate across restarts, reports health, and exits 0 on SIGTERM', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-server-'));
    const { url } = await freshDatabase({ empty: true });
    const env = { DATA_DIR: dataDir, DATABASE_URL: url };

    const first = await startServer(env);
    // A failed expectation must not leave the process running.
    onTestFinished(() => {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    });
    const notFound = await httpsRequest(first.port, '/api/v1/nope');
    expect(notFound.status).toBe(404);
    expect(notFound.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(notFound.body)).toEqual({ success: false, error: 'Route GET /api/v1/nope not found' });
    expect(existsSync(path.join(dataDir, 'tls', 'cert.pem'))).toBe(true);
    expect(await httpGet(first.internalPort, '/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await httpGet(first.internalPort, '/health/ready')).toEqual({
      status: 200,
      body: { status: 'ok', checks: { database: 'ok' } },
    });

    // Plain HTTP on the TLS port: the JSON refusal and Connection: close, not a dropped connection.
    const refusal =
      'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 45\r\nConnection: close\r\n\r\n{"success":false,"error":"HTTPS is required"}';
    expect(await rawExchange(first.port, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')).toBe(refusal);
    expect(
      await rawExchange(first.port, [
        'POST /api/v1/calls/trigger HTTP/1.1\r\nHost: x\r\n',
        'Content-Type: application/json\r\nContent-Length: 31\r\n\r\n{"phone_number":"+14155552671"}',
      ]),
    ).toBe(refusal);
    const plain = await fetch(`http://127.0.0.1:${first.port}/api/v1/calls/trigger`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(20_000),
    });
    expect([plain.status, plain.headers.get('connection'), await plain.json()]).toEqual([
      400,
      'close',
      { success: false, error: 'HTTPS is required' },
    ]);
    // The same port still speaks TLS, and an unknown Expect header is ignored rather than answered 417.
    expect(
      (
        await httpsRequest(first.port, '/api/v1/calls/trigger', {
          method: 'POST',
          headers: { expect: 'something-odd', 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBe(401);

    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toContain('"signal":"SIGTERM"');

    const second = await startServer(env);
    expect((await httpsRequest(second.port, '/x')).fingerprint).toBe(notFound.fingerprint);
    expect(await second.stop('SIGINT')).toBe(0);
  });

  it('the internal listener is on loopback unless INTERNAL_HOST says otherwise, even with HOST=0.0.0.0', async () => {
    // An address of this machine that is not loopback: the internal port must not answer there.
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    if (!external)
      return void console.warn('no non-loopback IPv4 address on this machine: INTERNAL_HOST binding not checked');
    const { url } = await freshDatabase();
    const server = await startServer({
      DATA_DIR: await fs.mkdtemp(path.join(os.tmpdir(), 'oct-server-')),
      DATABASE_URL: url,
      HOST: '0.0.0.0',
    });
    try {
      expect((await httpsRequest(server.port, '/x', { host: external })).status).toBe(404);
      expect((await httpGet(server.internalPort, '/health/live')).status).toBe(200);
      const reached = await fetch(`http://${external}:${server.internalPort}/health/live`).then(
        (r) => r.status,
        (e: Error & { cause?: { code?: string } }) => e.cause?.code,
      );
      expect(reached).toBe('ECONNREFUSED');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it('answers readiness 503 when Redis is configured but unreachable, and still starts', async () => {
    const { url } = await freshDatabase();
    const deadPort = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const server = await startServer({
      DATA_DIR: await fs.mkdtemp(path.join(os.tmpdir(), 'oct-server-')),
      DATABASE_URL: url,
      REDIS_URL: `redis://127.0.0.1:${deadPort}`,
    });
    const ready = await httpGet(server.internalPort, '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable', checks: { database: 'ok' } });
    expect(await server.stop()).toBe(0);
  });

  it('TLS_MODE=files serves the given certificate', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-server-'));
    const { selfSignedCertificate } = await import('../../src/tls.js');
    await selfSignedCertificate(path.join(dataDir, 'made-elsewhere'));
    const tlsDir = path.join(dataDir, 'made-elsewhere', 'tls');
    const { url } = await freshDatabase();
    const server = await startServer({
      DATA_DIR: dataDir,
      DATABASE_URL: url,
      TLS_MODE: 'files',
      TLS_CERT_FILE: path.join(tlsDir, 'cert.pem'),
      TLS_KEY_FILE: path.join(tlsDir, 'key.pem'),
    });
    const { X509Certificate } = await import('node:crypto');
    const expected = new X509Certificate(await fs.readFile(path.join(tlsDir, 'cert.pem'))).fingerprint256;
    expect((await httpsRequest(server.port, '/x')).fingerprint).toBe(expected);
    expect(existsSync(path.join(dataDir, 'tls'))).toBe(false);
    expect(await server.stop()).toBe(0);
  });

  it('SIGTERM lets a request in flight finish before exiting 0', async () => {
    const { url } = await freshDatabase();
    const server = await startServer({
      DATA_DIR: await fs.mkdtemp(path.join(os.tmpdir(), 'oct-server-')),
      DATABASE_URL: url,
    });
    const tls = await import('node:tls');
    const socket = tls.connect({ host: '127.0.0.1', port: server.port, rejectUnauthorized: false });
    await new Promise((r) => socket.once('secureConnect', r));
    const body = '{"phone_number":"+14155552671"}';
    // Headers and half the body now; the request is in flight while the signal arrives.
    socket.write(
      `POST /api/v1/calls/trigger HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    let response = '';
    socket.on('data', (c: Buffer) => {
      response += c.toString();
    });
    // A connection that has sent nothing yet (neither TLS nor HTTP) does not hold the shutdown up.
    const silent = net.connect(server.port, '127.0.0.1');
    const silentClosed = new Promise((r) => silent.once('close', r));
    silent.on('error', () => {});
    await new Promise((r) => setTimeout(r, 200));
    const exited = server.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    socket.write(body.slice(10));
    await new Promise((r) => socket.once('end', r));
    expect(response).toMatch(/^HTTP\/1.1 401/);
    expect(response).toContain('{"success":false,"error":"Invalid API key"}');
    expect(await exited).toBe(0);
    await silentClosed;
  });

  it('refuses to start on bad configuration, naming the variable', async () => {
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync(SERVER_COMMAND[0], SERVER_COMMAND.slice(1), {
      env: { ...process.env, PORT: 'eighty' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('PORT: must be an integer');
  });
});
