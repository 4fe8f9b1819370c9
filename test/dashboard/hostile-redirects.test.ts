// Hostile `next` values on the three routes that redirect to one, and a throw inside a request's session callbacks:
// each is that request's safe redirect, 400 page or 500 page, never the process's end (issue 21, point 1).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import Fastify, { type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import pino from 'pino';
import { createAgency } from '../../src/admin/accounts.js';
import { app as appPlugin, fastifyOptions, registerDashboard } from '../../src/app.js';
import type { App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { PostgresSessionStore } from '../../plugins/dashboard/session.js';
import { validatorCompiler } from '../../schemas/validation.js';
import { buildTestApp } from '../helpers/app.js';
import { freshDatabase, freshPrisma, storageOf } from '../helpers/database.js';
import { httpGet, httpsRequest, startServer } from '../helpers/server-process.js';
import { createUserWithPassword, DASHBOARD_ENV, PASSWORD, Visitor, type Answer } from './helpers.js';

const HOSTILE = [
  '/dashboard/\u2028',
  '/dashboard/\u0085',
  '/dashboard/\u0000',
  '/dashboard/a\tb',
  '/dashboard\r\nSet-Cookie: x=1',
  '/dashboard/\u00e9\u202e',
  '//evil.example',
  '/\\evil.example',
  '/dashboard/\\..\\api',
  'https://evil.example/dashboard',
  '/dashboard/../api/v1/calls/trigger',
  '/dashboard/%2e%2e/api',
  '/dashboard/%E2%80%A8',
  '/dashboard/%0d%0aSet-Cookie:%20x=1',
  '/dashboard?x=\u2028\u0085',
  `/dashboard/${'a'.repeat(5000)}`,
];

/** A redirect may only go to one of our pages, and its Location must be printable ASCII. */
function expectSafe(res: Answer, label: string) {
  if (res.status === 400) {
    expect(res.headers['content-type'], label).toMatch(/^text\/html/);
    expect(res.location, label).toBeUndefined();
    return;
  }
  expect(res.status, label).toBe(303);
  const location = res.location!;
  expect(location, label).toMatch(/^\/dashboard(\/|\?|$)[\x21-\x7e]*$/);
  const resolved = new URL(location, 'https://dash.example.test');
  expect(resolved.origin, label).toBe('https://dash.example.test');
  expect(resolved.pathname, label).toMatch(/^\/dashboard(\/|$)/);
}

/** The app still answers: an API route and a dashboard page. */
async function expectServing(app: App) {
  const api = await app.inject({
    method: 'GET',
    url: '/api/v1/nope',
    headers: { host: 'dash.example.test', 'x-forwarded-proto': 'https' },
  });
  expect(api.statusCode).toBe(404);
  expect((await new Visitor(app).get('/dashboard/sign-in')).status).toBe(200);
}

describe('hostile next values', () => {
  it('answer a safe redirect or a 400 page on all three routes, and the app keeps serving', async () => {
    const { app } = await buildTestApp({ env: DASHBOARD_ENV });
    const { id } = await createAgency(app.storage, { name: 'Acme' });
    for (const [i, next] of HOSTILE.entries()) {
      const label = JSON.stringify(next.slice(0, 60));
      // One user and one IP per value: the sign-in throttle counts every attempt.
      const email = `hostile${i}@example.com`;
      await createUserWithPassword(app.storage, id, email);
      const visitor = new Visitor(app);
      visitor.ip = `198.51.100.${i + 1}`;

      // A signed-out victim follows the link and signs in normally (the form's next is the link's).
      const signIn = await visitor.submit(`/dashboard/sign-in?next=${encodeURIComponent(next)}`, '/dashboard/sign-in', {
        email,
        password: PASSWORD,
        next,
      });
      expectSafe(signIn, `POST /dashboard/sign-in ${label}`);
      if (signIn.status === 400) expect((await visitor.signIn(email)).status).toBe(303);

      // The link again, signed in.
      expectSafe(
        await visitor.get(`/dashboard/sign-in?next=${encodeURIComponent(next)}`),
        `GET /dashboard/sign-in ${label}`,
      );

      // Re-entering the password.
      const confirm = await visitor.submit(
        `/dashboard/confirm-password?next=${encodeURIComponent(next)}`,
        '/dashboard/confirm-password',
        { password: PASSWORD, next },
      );
      expectSafe(confirm, `POST /dashboard/confirm-password ${label}`);

      await expectServing(app);
    }
  });

  it('keep what a page of ours asked for, normalised: the query stays, the fragment and dot segments go', async () => {
    const { app } = await buildTestApp({ env: DASHBOARD_ENV });
    const { id } = await createAgency(app.storage, { name: 'Acme' });
    await createUserWithPassword(app.storage, id, 'ada@example.com');
    const visitor = new Visitor(app);
    await visitor.signIn('ada@example.com');
    const to = async (next: string) =>
      (await visitor.get(`/dashboard/sign-in?next=${encodeURIComponent(next)}`)).location;
    expect(await to('/dashboard/calls?status=failed&page=2')).toBe('/dashboard/calls?status=failed&page=2');
    expect(await to('/dashboard/calls/../account#top')).toBe('/dashboard/account');
    expect(await to('/dashboard/\u2028')).toBe('/dashboard/%E2%80%A8');
    expect(await to('/dashboard/\u0000')).toBe('/dashboard');
    expect(await to('/dashboardx')).toBe('/dashboard');
  });
});

/** At most `ms` for an answer: a server that stopped would otherwise leave the request to hang. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

describe('the real server process', () => {
  it('answers a signed-in GET /dashboard/sign-in?next=<U+2028, U+0085, NUL> with a safe redirect and keeps running', async () => {
    const { url, prisma } = await freshPrisma();
    const { id } = await createAgency(storageOf(prisma), { name: 'Acme' });
    await createUserWithPassword(prisma, id, 'ada@example.com');
    const server = await startServer({
      DATA_DIR: await fs.mkdtemp(path.join(os.tmpdir(), 'oct-hostile-')),
      DATABASE_URL: url,
    });
    onTestFinished(() => {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    });
    const origin = `https://127.0.0.1:${server.port}`;
    const jar = new Map<string, string>();
    const send = async (pathname: string, init: { method?: string; body?: string } = {}) => {
      const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
      if (init.method === 'POST')
        Object.assign(headers, { origin, 'content-type': 'application/x-www-form-urlencoded' });
      const res = await within(30_000, httpsRequest(server.port, pathname, { ...init, headers }));
      for (const line of ([] as string[]).concat(res.headers['set-cookie'] ?? [])) {
        const [pair = ''] = line.split(';');
        const at = pair.indexOf('=');
        jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
      return res;
    };
    const form = await send('/dashboard/sign-in');
    const token = /name="_csrf" value="([^"]+)"/.exec(form.body)![1]!;
    const signedIn = await send('/dashboard/sign-in', {
      method: 'POST',
      body: new URLSearchParams({ _csrf: token, email: 'ada@example.com', password: PASSWORD }).toString(),
    });
    expect(signedIn.status).toBe(303);
    for (const [next, location] of [
      ['/dashboard/\u2028', '/dashboard/%E2%80%A8'],
      ['/dashboard/\u0085', '/dashboard/%C2%85'],
      ['/dashboard/\u0000', '/dashboard'],
    ]) {
      const res = await send(`/dashboard/sign-in?next=${encodeURIComponent(next!)}`);
      expect([res.status, res.headers.location]).toEqual([303, location]);
    }
    expect((await within(30_000, httpGet(server.internalPort, '/health/live'))).status).toBe(200);
    expect((await send('/api/v1/nope')).status).toBe(404);
    expect(server.child.exitCode).toBeNull();
    expect(server.output()).not.toContain('ERR_INVALID_CHAR');
    expect(await server.stop()).toBe(0);
  });
});

/**
 * The real app with a logger that keeps its lines, plus a second dashboard scope at /probe whose route sets a header
 * `writeHead` refuses: the throw happens after @fastify/session's save, inside the session store's callback.
 */
async function buildLoggedProbe() {
  const { url } = await freshDatabase();
  const config = loadConfig({
    DATA_DIR: '.data/test',
    DISPATCH_ENABLED: 'false',
    WEBHOOK_DELIVERY_ENABLED: 'false',
    ...DASHBOARD_ENV,
    DATABASE_URL: url,
  });
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const instance = Fastify({ ...fastifyOptions(config), loggerInstance: logger } as FastifyServerOptions);
  instance.setValidatorCompiler(validatorCompiler);
  await instance.register(fp(appPlugin, { name: 'app' }), { config, databaseUrl: url });
  await instance.register(
    async (scope) => {
      await registerDashboard(scope, config);
      scope.get('/bad-header', { schema: { hide: true }, config: { role: 'public' } }, async (_request, reply) =>
        reply.header('x-note', 'a\u2028b').type('text/plain').send('never sent'),
      );
    },
    { prefix: '/probe' },
  );
  await instance.ready();
  return { app: instance as unknown as App, lines };
}

describe("a throw inside a request's session callbacks", () => {
  it("is that request's 500 page and a log line; the next request is served", async () => {
    const { app, lines } = await buildLoggedProbe();
    try {
      const { id } = await createAgency(app.storage, { name: 'Acme' });
      await createUserWithPassword(app.storage, id, 'ada@example.com');
      const visitor = new Visitor(app);
      expect((await visitor.signIn('ada@example.com')).status).toBe(303);
      // Signed in: the rolling session is saved on this answer, so writing the head runs after the store's callback.
      const failed = await visitor.get('/probe/bad-header');
      expect(failed.status).toBe(500);
      expect(failed.headers['content-type']).toMatch(/^text\/html/);
      expect(failed.body).toContain('Something went wrong on our side.');
      expect(failed.headers['x-note']).toBeUndefined();
      expect(lines.some((line) => line.includes('"level":50') && line.includes('ERR_INVALID_CHAR'))).toBe(true);
      expect((await visitor.get('/dashboard')).status).toBe(200);
      await expectServing(app);
    } finally {
      await app.close();
    }
  });

  it("a throwing store callback gets the throw back as the call's error; a second throw is reported, not lost to the process", async () => {
    const { app } = await buildTestApp({ env: DASHBOARD_ENV });
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const lost: unknown[] = [];
      const store = new PostgresSessionStore(
        app.storage.sessions,
        { idleMs: 60_000, maxMs: 3_600_000 },
        () => new Date(),
        (error) => void lost.push(error),
      );
      const boom = new Error('boom');
      const calls = await new Promise<unknown[]>((resolve) => {
        const seen: unknown[] = [];
        store.get('x'.repeat(43), (error) => {
          seen.push(error);
          if (seen.length === 1) throw boom;
          resolve(seen);
        });
      });
      expect(calls).toEqual([null, boom]);

      const twice = new Error('twice');
      await new Promise<void>((resolve) => {
        store.destroy('y'.repeat(43), () => {
          setImmediate(resolve);
          throw twice;
        });
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lost).toEqual([twice]);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});
