// JSON the tests read (response bodies, webhook payloads, callctl output, log lines), given the type the test expects.
import type { ErrorResponse } from '../../schemas/error.js';
import type { TriggerResponse } from '../../schemas/trigger.js';
import type { WebhookEvent } from '../../schemas/webhook.js';

export type { ErrorResponse, TriggerResponse, WebhookEvent };

/**
 * `text` parsed as a `T`: the shape the test states it expects, not a check of it (the test's assertions are), so that
 * a field the test reads is typed instead of `any`.
 */
export function json<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** One line of the service's JSON log (pino): the fields a test reads, the rest unknown. */
export interface LogLine {
  msg?: string;
  level?: number;
  [field: string]: unknown;
}

/** The JSON lines of a log, one object a line (blank lines skipped). */
export function logLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => json<LogLine>(line));
}
