// AppError: what domain code throws for a coded error of the one table (schemas/error-codes.ts); the errors plugin
// turns it into { success: false, error }.
import { ERRORS, errorMessage, type ErrorCode } from '../schemas/error-codes.js';

export class AppError extends Error {
  override name = 'AppError';
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    params: Record<string, string | number> = {},
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    // A client error (4xx) is an answer, not a fault: no stack trace is captured for it (capturing one is a measurable
    // part of a refused request's CPU: docs/performance.md#no-stack-trace-for-a-4xx). 5xx errors keep theirs.
    const stackTraceLimit = Error.stackTraceLimit;
    if (ERRORS[code].status < 500) Error.stackTraceLimit = 0;
    super(errorMessage(code, params));
    Error.stackTraceLimit = stackTraceLimit;
    this.statusCode = ERRORS[code].status;
  }
}
