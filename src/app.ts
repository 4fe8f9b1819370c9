// The whole API as one Fastify plugin plus the factory that wraps it in an instance; no listening here.
import { randomUUID } from 'node:crypto';
import fp from 'fastify-plugin';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { loggerOptions, RequestLineLogController } from './logger.js';
import contextTokenAuth from '../plugins/context-token-auth.js';
import contextTokens from '../plugins/context-tokens.js';
import concurrency from '../plugins/concurrency.js';
import configPlugin from '../plugins/config.js';
import db from '../plugins/db.js';
import type { Storages } from './storage/index.js';
import errors from '../plugins/errors.js';
import httpsOnly from '../plugins/https-only.js';
import access from '../plugins/access.js';
import bearerAuth from '../plugins/bearer-auth.js';
import keyUsage from '../plugins/key-usage.js';
import failedAuthThrottle from '../plugins/failed-auth-throttle.js';
import idempotency from '../plugins/idempotency.js';
import jobs, { type JobsOptions } from '../plugins/jobs.js';
import keyInUrl from '../plugins/key-in-url.js';
import mailer from '../plugins/mailer.js';
import metrics from '../plugins/metrics.js';
import openapi from '../plugins/openapi.js';
import rateLimit from '../plugins/rate-limit.js';
import secrets from '../plugins/secrets.js';
import redis from '../plugins/redis.js';
import triggerRoute from './routes/api/v1/calls/trigger.js';
import dashboardPlugins, { dashboardHelmet } from '../plugins/dashboard/index.js';
import dashboard from './routes/dashboard/index.js';
import rootRedirect from './routes/dashboard/root-redirect.js';
import twilioRoutes from './routes/telephony/twilio.js';
import telnyxRoutes from './routes/telephony/telnyx.js';
import signalWireRoutes from './routes/telephony/signalwire.js';
import runtimeCalls from './routes/agent-runtime/calls.js';
import { validatorCompiler } from '../schemas/validation.js';
import { apiServerFactory } from './tls-listener.js';

export const BODY_LIMIT = 32 * 1024;
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface AppOptions {
  config: Config;
  databaseUrl: string;
  /** The service's clock; tests inject one to reach calling windows and expiries without waiting. */
  clock?: () => Date;
  /** Test seams for background work: a dialer, dispatcher timings, a hook between claim and dial. */
  jobs?: Omit<JobsOptions, 'databaseUrl'>;
  /** The two storages, when the caller made them (a test that watches the pools); made from databaseUrl otherwise. */
  storages?: Storages;
}

/**
 * The dashboard's plugins and its pages, in `scope` (the service mounts them under /dashboard; tests that probe the
 * dashboard mount them beside routes of their own).
 */
export async function registerDashboard(scope: FastifyInstance, config: Config) {
  await scope.register(dashboardPlugins, {
    sessionIdleMinutes: config.DASHBOARD_SESSION_IDLE_MINUTES,
    sessionMaxHours: config.DASHBOARD_SESSION_MAX_HOURS,
  });
  await scope.register(dashboard);
}

/** Requests a runtime may make per call per minute: it reads the context once or twice and posts a result or two. */
const RUNTIME_REQUESTS_PER_CALL_PER_MINUTE = 60;

/** The service: shared plugins first (each owns one concern), then routes. */
export async function app(
  fastify: FastifyInstance,
  { config, databaseUrl, clock, jobs: jobOptions, storages }: AppOptions,
) {
  await fastify.register(configPlugin, { config, clock });
  await fastify.register(errors);
  await fastify.register(metrics);
  await fastify.register(httpsOnly, { behindProxy: config.TLS_MODE === 'proxy' });
  await fastify.register(db, { databaseUrl, storages });
  await fastify.register(secrets);
  await fastify.register(concurrency);
  await fastify.register(contextTokens);
  await fastify.register(redis, { redisUrl: config.REDIS_URL });
  await fastify.register(jobs, { databaseUrl, ...jobOptions });
  await fastify.register(mailer);
  // Before the routes: @fastify/swagger learns them as they are added.
  await fastify.register(openapi);
  if (config.PUBLIC_BASE_URL) {
    // Every carrier's callbacks, wherever calls may be dialled through it: the environment's (DIALER) or an account's
    // own (PRODUCT.md, "Placing calls"). They authenticate by signature, not API key (outside the /api/v1 scope),
    // each checked with the credentials of the carrier its call was dialled with (fastify.dialers).
    const telephony = { publicBaseUrl: config.PUBLIC_BASE_URL, agentStreamUrl: config.AGENT_STREAM_URL };
    await fastify.register(twilioRoutes, telephony);
    // Telnyx's webhooks carry their call in client_state, inside the body its ed25519 signature covers.
    await fastify.register(telnyxRoutes, { agentStreamUrl: config.AGENT_STREAM_URL });
    // SignalWire's callbacks, the same routes as Twilio's under their own path, checked with a project's signing key.
    await fastify.register(signalWireRoutes, telephony);
  }

  // The authenticated API. Hook order is the contract's check order (after https-only, the root's): key in URL, key
  // (the failed-authentication throttle answers a key that does not work), access, rate limit; then Fastify parses
  // (415, 413, malformed JSON) and validates the body; then idempotency and the handler.
  await fastify.register(
    async (api) => {
      // Only JSON bodies: without this, text/plain would be parsed and fail later as a wrong type instead of 415.
      api.removeContentTypeParser('text/plain');
      await api.register(keyInUrl);
      await api.register(failedAuthThrottle, { failuresPerMinute: config.AUTH_FAILURES_PER_MINUTE });
      await api.register(bearerAuth);
      await api.register(keyUsage);
      await api.register(access);
      await api.register(rateLimit, { perMinute: config.RATE_LIMIT_PER_MINUTE });
      await api.register(idempotency);
      await api.register(triggerRoute);
    },
    { prefix: '/api/v1' },
  );

  // The voice-agent runtime's operations on the call it was handed: authenticated by the call's context token (before
  // the rate limit, so a request without one spends no call's budget), limited per call, never by an API key.
  await fastify.register(
    async (runtime) => {
      runtime.removeContentTypeParser('text/plain');
      await runtime.register(failedAuthThrottle, {
        failuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
        invalid: 'INVALID_CONTEXT_TOKEN',
      });
      await runtime.register(contextTokenAuth);
      await runtime.register(rateLimit, {
        perMinute: RUNTIME_REQUESTS_PER_CALL_PER_MINUTE,
        keyOf: (request) => `runtime:${request.runtimeClaims?.callId ?? request.ip}`,
        policy: 'per-call',
      });
      await runtime.register(runtimeCalls, { resultWaitMs: config.AGENT_RESULT_WAIT_SECONDS * 1000 });
    },
    { prefix: '/agent-runtime/v1' },
  );

  // The dashboard: its sessions, CSRF, helmet, forms and views live in its own scope, never on /api/v1.
  await fastify.register((scope) => registerDashboard(scope, config), { prefix: '/dashboard' });
  await fastify.register(async (frontDoor) => {
    await frontDoor.register(dashboardHelmet);
    await frontDoor.register(rootRedirect);
  });
}

export interface BuildOptions extends AppOptions {
  https?: { key: string | Buffer; cert: string | Buffer } | null;
  logger?: FastifyBaseLogger;
}

export function fastifyOptions(config: Config): FastifyServerOptions {
  return {
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    // A client's X-Request-Id is kept only when it is a plain token: it is written on every log line.
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && SAFE_REQUEST_ID.test(given) && !/svc_sk_|whsec_/i.test(given)
        ? given
        : randomUUID();
    },
    logController: new RequestLineLogController(),
    // Requests already on an open connection finish normally during shutdown (nothing half-done).
    return503OnClosing: false,
    // Malformed HTTP never reaches a handler: answer it with the same envelope, then close.
    clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
      if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
      const body = JSON.stringify({ success: false, error: 'Malformed HTTP request' });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
    ajv: { customOptions: { removeAdditional: false } },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  };
}

export async function buildApp(options: BuildOptions) {
  const { https, logger, ...appOptions } = options;
  const base = fastifyOptions(options.config);
  const instance = Fastify({
    ...base,
    // The factory makes the listener (TLS, with its answer to plain HTTP); `https` still tells Fastify's logs the scheme.
    serverFactory: apiServerFactory(https ?? null),
    ...(https ? { https } : {}),
    ...(logger ? { loggerInstance: logger } : { logger: loggerOptions(options.config.LOG_LEVEL) }),
  } as FastifyServerOptions).withTypeProvider<TypeBoxTypeProvider>();
  instance.setValidatorCompiler(validatorCompiler);
  await instance.register(fp(app, { name: 'app' }), appOptions);
  await instance.ready();
  return instance;
}

export type App = Awaited<ReturnType<typeof buildApp>>;
