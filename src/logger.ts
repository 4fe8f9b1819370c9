// pino options shared by the API and internal listeners: JSON lines, keys and secrets never written.
import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';

const SECRET_PATTERNS = [
  /svc_sk_[A-Za-z0-9]+/g,
  /whsec_[A-Za-z0-9+/=]+/g,
  /(postgres(?:ql)?|redis|rediss):\/\/[^\s@/]*@/g,
  /(?<=\/set-password\/)[A-Za-z0-9_-]+/g,
];
const QUERY_SECRET = /([?&](?:api_key|apikey|key|token|access_token|secret|password)=)[^&#]*/gi;

/** Matches wherever one of the patterns above could: most log strings match none and are returned after one test. */
const MAYBE_SECRET =
  /svc_sk_|whsec_|:\/\/|\/set-password\/|[?&](?:api_key|apikey|key|token|access_token|secret|password)=/i;

/** Replaces anything that looks like an API key, webhook secret or credentialed URL. */
export function scrub(text: string): string {
  if (!MAYBE_SECRET.test(text)) return text;
  let out = text.replace(QUERY_SECRET, '$1[REDACTED]');
  for (const pattern of SECRET_PATTERNS)
    out = out.replace(pattern, (match) =>
      match.includes('://') ? `${match.split('://')[0]}://[REDACTED]@` : '[REDACTED]',
    );
  return out;
}

/** A request's path for logs and error messages: decoded (so encoded keys are seen), scrubbed, query dropped. */
export function safePath(url: string): string {
  const [path = '/', query] = url.split('?', 2);
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape: scrub what is there.
  }
  return `${scrub(decoded).slice(0, 200)}${query === undefined ? '' : '?[REDACTED]'}`;
}

function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  // pino runs formatters before serializers: leave class instances (Fastify's request, reply) to their serializers.
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubDeep(v, depth + 1);
  return out;
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: {
      paths: [
        // Request headers are never logged (see the req serializer); these catch headers logged by hand.
        'headers.authorization',
        'headers.cookie',
        'headers["x-twilio-signature"]',
        // No wildcards: a wildcard makes pino copy every logged object, which strips Fastify's request getters.
        'secret',
        'key',
        'apiKey',
        'metadata',
        'call.metadata',
        'data.metadata',
        'payload',
      ],
      censor: '[REDACTED]',
    },
    serializers: {
      err(error: Error & { code?: string }) {
        return {
          type: error.name,
          code: error.code,
          message: scrub(String(error.message)),
          stack: scrub(error.stack ?? ''),
        };
      },
      req(request) {
        return {
          method: request.method,
          url: safePath(request.url),
          remoteAddress: request.ip,
        };
      },
    },
    formatters: {
      log: (object) => scrubDeep(object) as Record<string, unknown>,
    },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? scrub(a) : a)) as Parameters<typeof method>);
      },
    },
  };
}

/** The dashboard's stylesheet, scripts and icon: a page asks for several, their lines would bury the page's own. */
const QUIET_ROUTES = /^\/dashboard\/assets\//;

/**
 * One line per request (method, path, status, latency) instead of Fastify's two; the request id is on every line.
 * An asset's line is at debug level (LOG_LEVEL=debug shows it), unless it failed.
 */
export class RequestLineLogController extends LogController {
  override incomingRequest() {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply) {
    if (this.isLogDisabled(request)) return;
    const line = {
      req: request,
      route: request.routeOptions.url,
      statusCode: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else if (QUIET_ROUTES.test(request.routeOptions.url ?? '')) reply.log.debug(line, 'request completed');
    else reply.log.info(line, 'request completed');
  }
}
