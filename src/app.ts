// The whole API as one Fastify plugin plus the factory that wraps it in an instance; no listening here.
import fp from 'fastify-plugin';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { loggerOptions } from './logger.js';
import db from './plugins/db.js';
import errors from './plugins/errors.js';
import httpsOnly from './plugins/https-only.js';
import redis from './plugins/redis.js';
import { validatorCompiler } from './schemas/validation.js';

export const BODY_LIMIT = 32 * 1024;

export interface AppOptions {
  config: Config;
  databaseUrl: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
  }
}

/** The service: shared plugins first (each owns one concern), then routes. */
export async function app(fastify: FastifyInstance, { config, databaseUrl }: AppOptions) {
  fastify.decorate('config', config);
  await fastify.register(errors);
  await fastify.register(httpsOnly, { behindProxy: config.TLS_MODE === 'proxy' });
  await fastify.register(db, { databaseUrl });
  await fastify.register(redis, { redisUrl: config.REDIS_URL });
}

export interface BuildOptions extends AppOptions {
  https?: { key: string | Buffer; cert: string | Buffer } | null;
  logger?: FastifyBaseLogger;
}

export function fastifyOptions(config: Config): FastifyServerOptions {
  return {
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    requestIdHeader: 'x-request-id',
    requestIdLogLabel: 'reqId',
    disableRequestLogging: false,
    // Requests already on an open connection finish normally during shutdown (nothing half-done).
    return503OnClosing: false,
    // Malformed HTTP never reaches a handler: answer it with the same envelope, then close.
    clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
      if (!socket.writable || error.code === 'ECONNRESET') return socket.destroy();
      const body = JSON.stringify({ success: false, error: 'Malformed HTTP request' });
      socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    },
    ajv: { customOptions: { removeAdditional: false } },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  };
}

export async function buildApp(options: BuildOptions) {
  const base = fastifyOptions(options.config);
  const instance = Fastify({
    ...base,
    ...(options.https ? { https: options.https } : {}),
    ...(options.logger ? { loggerInstance: options.logger } : { logger: loggerOptions(options.config.LOG_LEVEL) }),
  } as FastifyServerOptions).withTypeProvider<TypeBoxTypeProvider>();
  instance.setValidatorCompiler(validatorCompiler);
  await instance.register(fp(app, { name: 'app' }), { config: options.config, databaseUrl: options.databaseUrl });
  await instance.ready();
  return instance;
}

export type App = Awaited<ReturnType<typeof buildApp>>;
