// AppError: a client error carries no stack trace (it is an answer, not a fault); a server error keeps its stack.
import { describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';

describe('AppError', () => {
  it('captures no stack for 4xx, a full one for 5xx, and leaves the global limit as it was', () => {
    const limit = Error.stackTraceLimit;
    const refused = new AppError('RATE_LIMITED', { seconds: 5 });
    expect(refused.statusCode).toBe(429);
    expect(refused.message).toBe('Rate limit exceeded. Retry after 5 seconds.');
    expect(refused.stack).not.toMatch(/\n\s+at /);
    const failed = new AppError('SERVICE_UNAVAILABLE');
    expect(failed.stack).toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(limit);
  });
});
