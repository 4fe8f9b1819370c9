// The real process: HTTPS with a self-signed certificate made once, JSON everywhere, health on the internal port,
// and a graceful exit 0 on SIGTERM.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/database.js';
import { SERVER_COMMAND, httpGet, httpsRequest, startServer } from '../helpers/server-process.js';

describe('server process with DATABASE_URL', () => {
  it('serves HTTPS, keeps its certificate across restarts, reports health, and exits 0 on SIGTERM', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-server-'));
    const { url } = await freshDatabase({ empty: true });
    const env = { DATA_DIR: dataDir, DATABASE_URL: url };

    const first = await startServer(env);
    const notFound = await httpsRequest(first.port, '/api/v1/nope');
    expect(notFound.status).toBe(404);
    expect(notFound.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(notFound.body)).toEqual({ success: false, error: 'Route GET /api/v1/nope not found' });
    expect(existsSync(path.join(dataDir, 'tls', 'cert.pem'))).toBe(true);
    expect(await httpGet(first.internalPort, '/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await httpGet(first.internalPort, '/health/ready')).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok' } } });

    // Plain HTTP on the TLS port never reaches a handler.
    const plain = await fetch(`http://127.0.0.1:${first.port}/api/v1/calls/trigger`).then((r) => r.status, () => 'refused');
    expect(plain).toBe('refused');

    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toContain('"signal":"SIGTERM"');

    const second = await startServer(env);
    expect((await httpsRequest(second.port, '/x')).fingerprint).toBe(notFound.fingerprint);
    expect(await second.stop('SIGINT')).toBe(0);
  });

  it('answers readiness 503 when Redis is configured but unreachable, and still starts', async () => {
    const { url } = await freshDatabase();
    const deadPort = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)); });
    });
    const server = await startServer({ DATA_DIR: await fs.mkdtemp(path.join(os.tmpdir(), 'oct-server-')), DATABASE_URL: url, REDIS_URL: `redis://127.0.0.1:${deadPort}` });
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
    const server = await startServer({ DATA_DIR: dataDir, DATABASE_URL: url, TLS_MODE: 'files', TLS_CERT_FILE: path.join(tlsDir, 'cert.pem'), TLS_KEY_FILE: path.join(tlsDir, 'key.pem') });
    const { X509Certificate } = await import('node:crypto');
    const expected = new X509Certificate(await fs.readFile(path.join(tlsDir, 'cert.pem'))).fingerprint256;
    expect((await httpsRequest(server.port, '/x')).fingerprint).toBe(expected);
    expect(existsSync(path.join(dataDir, 'tls'))).toBe(false);
    expect(await server.stop()).toBe(0);
  });

  it('SIGTERM lets a request in flight finish before exiting 0', async () => {
    const { url } = await freshDatabase();
    const server = await startServer({ DATA_DIR: await fs.mkdtemp(path.join(os.tmpdir(), 'oct-server-')), DATABASE_URL: url });
    const tls = await import('node:tls');
    const socket = tls.connect({ host: '127.0.0.1', port: server.port, rejectUnauthorized: false });
    await new Promise((r) => socket.once('secureConnect', r));
    const body = '{"phone_number":"+14155552671"}';
    // Headers and half the body now; the request is in flight while the signal arrives.
    socket.write(`POST /api/v1/calls/trigger HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    let response = '';
    socket.on('data', (c: Buffer) => { response += c.toString(); });
    await new Promise((r) => setTimeout(r, 200));
    const exited = server.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    socket.write(body.slice(10));
    await new Promise((r) => socket.once('end', r));
    expect(response).toMatch(/^HTTP\/1.1 401/);
    expect(response).toContain('{"success":false,"error":"Invalid API key"}');
    expect(await exited).toBe(0);
  });

  it('refuses to start on bad configuration, naming the variable', async () => {
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync(SERVER_COMMAND[0], SERVER_COMMAND.slice(1), { env: { ...process.env, PORT: 'eighty' }, encoding: 'utf8' });
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('PORT: must be an integer');
  });
});
