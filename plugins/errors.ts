// Central error handling: every error, Fastify's own included, becomes { success: false, error }; 5xx hide details.
import { validateHeaderName, validateHeaderValue } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../src/errors.js';
import type { ErrorCode } from '../schemas/error-codes.js';
import { safePath } from '../src/logger.js';
import { describeValidationError, validationErrorCode } from '../schemas/validation.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../schemas/headers.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const UNAVAILABLE_CODES = new Set([
  'P1001',
  'P1002',
  'P1017',
  'P2024',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  '57P01',
  '57P03',
  // Overload, not fault: a statement cancelled by statement_timeout, a lock not had within lock_timeout, no free
  // server connection.
  '57014',
  '55P03',
  '53300',
]);

/** A database outage or overload the client may retry after (503), not a fault of ours (500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: string; name?: string; message?: string; cause?: unknown } | null;
  if (!e) return false;
  if (e.code && UNAVAILABLE_CODES.has(e.code)) return true;
  if (
    /ECONNREFUSED|Connection terminated|timeout exceeded when trying to connect|Can't reach database server|Query read timeout/i.test(
      e.message ?? '',
    )
  )
    return true;
  return e.cause !== undefined && e.cause !== error && isDatabaseUnavailable(e.cause);
}

/** Fastify's own errors, mapped onto our codes. */
function fromFastify(error: FastifyError, bodyLimit: number): AppError | null {
  if (error.validation) {
    // A rule with a code in the table answers with that code (and so counts under it), whichever check found it.
    const code = validationErrorCode(error.validation);
    return code
      ? new AppError(code)
      : new AppError('VALIDATION', { detail: describeValidationError(error.validation, error.validationContext) });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('BODY_TOO_LARGE', { limit: bodyLimit });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('BODY_NOT_OBJECT');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('MALFORMED_JSON');
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message)))
    return new AppError('MALFORMED_JSON');
  return null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The code of the AppError this request was answered with (metrics read it after the response). */
    errorCode: ErrorCode | null;
  }
}

export function sendError(reply: FastifyReply, error: AppError) {
  reply.request.errorCode = error.code;
  reply.headers(error.headers);
  return reply
    .code(error.statusCode)
    .type('application/json; charset=utf-8')
    .send({ success: false, error: error.message });
}

/**
 * Before an error answer: it goes nowhere (no Location), and it must not carry a header the failed answer set that
 * `writeHead` refuses (a value with a control or non-Latin-1 character), or writing it would fail again.
 */
export function clearHeadersForError(reply: FastifyReply): void {
  reply.removeHeader('location');
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    try {
      validateHeaderName(name);
      for (const one of ([] as unknown[]).concat(value)) validateHeaderValue(name, one as string);
    } catch {
      reply.removeHeader(name);
    }
  }
}

async function errorsPlugin(fastify: FastifyInstance) {
  const bodyLimit = fastify.initialConfig.bodyLimit ?? 1_048_576;
  fastify.decorateRequest('errorCode', null);

  fastify.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    clearHeadersForError(reply);
    const known = error instanceof AppError ? error : fromFastify(error, bodyLimit);
    if (known) {
      if (known.statusCode >= 500) request.log.error({ err: error }, known.message);
      return sendError(reply, known);
    }
    const status = error.statusCode ?? 500;
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: error }, 'database unavailable');
      return sendError(
        reply,
        new AppError('SERVICE_UNAVAILABLE', {}, { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) }),
      );
    }
    if (status >= 400 && status < 500 && error.code?.startsWith('FST_')) {
      // Fastify's remaining client errors (bad URL, bad content length...) have safe, specific messages.
      return reply.code(status).send({ success: false, error: error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new AppError('INTERNAL'));
  });

  fastify.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((method) => fastify.hasRoute({ url: path, method }));
    // The message echoes the path: never a key that a client put in it.
    const shown = safePath(path);
    const code: ErrorCode = allowed.length > 0 ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND';
    if (allowed.length > 0) reply.header('allow', allowed.join(', '));
    return sendError(reply, new AppError(code, { method: request.method, path: shown }));
  });
}

export default fp(errorsPlugin, { name: 'errors', fastify: '5.x' });
