// A failure in a few words for an operator (readiness checks, log lines): errors whose message is empty (a pg
// AggregateError after trying every address) or buried under a preamble (Prisma) are read from their code or cause.

const BY_CODE: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EPIPE: 'connection closed',
};

export function describeError(error: unknown, depth = 0): string {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a thrown non-Error can be anything at all
  if (!(error instanceof Error)) return String(error ?? 'unknown error') || 'unknown error';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && BY_CODE[code]) return BY_CODE[code];
  // Prisma's message starts with the invocation and ends with the reason.
  const message = error.message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1);
  if (message) return message;
  if (depth < 3) {
    const inner: unknown = error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error.cause;
    if (inner !== undefined) return describeError(inner, depth + 1);
  }
  return typeof code === 'string' && code ? code : error.name;
}
