// The log for a person at a terminal: pino's JSON lines, as pino writes them to its destination, turned into short
// readable lines (time, level, message, then the fields), coloured when the terminal takes colours. Production keeps
// the JSON (LOG_FORMAT, chosen by logFormat below); pino-pretty is not a dependency, this is the little it needs.
import { styleText } from 'node:util';

export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT=auto: readable at a terminal, JSON elsewhere and always in production (a log collector reads it). */
export function logFormat(
  setting: 'auto' | LogFormat,
  stdout: { isTTY?: boolean | undefined },
  nodeEnv: string | undefined,
): LogFormat {
  if (setting !== 'auto') return setting;
  return stdout.isTTY === true && nodeEnv !== 'production' ? 'pretty' : 'json';
}

const LEVELS: Record<number, { name: string; color: Parameters<typeof styleText>[0] }> = {
  10: { name: 'TRACE', color: 'gray' },
  20: { name: 'DEBUG', color: 'gray' },
  30: { name: 'INFO ', color: 'green' },
  40: { name: 'WARN ', color: 'yellow' },
  50: { name: 'ERROR', color: 'red' },
  60: { name: 'FATAL', color: 'magenta' },
};
/** pino's own fields, and those a request line shows in its own words. */
const SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'req', 'statusCode', 'responseTimeMs']);

interface Entry {
  level?: number;
  time?: number;
  msg?: string;
  reqId?: string;
  req?: { method?: string; url?: string };
  statusCode?: number;
  responseTimeMs?: number;
  err?: { type?: string; message?: string; stack?: string };
  [field: string]: unknown;
}

function value(v: unknown): string {
  return typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
}

/** One log entry (a JSON line of pino) as the line a person reads; a line that is not JSON is passed on as it is. */
export function prettyLine(line: string, colors = false): string {
  let entry: Entry;
  try {
    entry = JSON.parse(line) as Entry;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const paint = (color: Parameters<typeof styleText>[0], text: string) => (colors ? styleText(color, text) : text);
  const level = LEVELS[entry.level ?? 30] ?? { name: String(entry.level), color: 'white' as const };
  const time = new Date(entry.time ?? Date.now()).toISOString().slice(11, 23);
  const parts = [paint('gray', time), paint(level.color, level.name)];
  if (entry.req && entry.statusCode !== undefined) {
    // A request line: "GET /dashboard 200 3.1 ms", the message ("request completed") is implied.
    parts.push(
      `${entry.req.method ?? ''} ${entry.req.url ?? ''} ${entry.statusCode} ${entry.responseTimeMs ?? '?'} ms`,
    );
    if (entry.msg && entry.msg !== 'request completed') parts.push(entry.msg);
  } else if (entry.msg !== undefined) parts.push(colors ? styleText('bold', entry.msg) : entry.msg);
  const fields = Object.entries(entry).filter(
    // A request's route is worth a field only where it differs from its path (`/dashboard/calls/:id`).
    ([key, v]) => !SHOWN.has(key) && key !== 'err' && !(key === 'route' && v === entry.req?.url),
  );
  if (fields.length > 0) parts.push(paint('gray', fields.map(([k, v]) => `${k}=${value(v)}`).join(' ')));
  if (entry.reqId) parts.push(paint('gray', `(${entry.reqId})`));
  let out = `${parts.join(' ')}\n`;
  if (entry.err) {
    const stack = entry.err.stack || `${entry.err.type ?? 'Error'}: ${entry.err.message ?? ''}`;
    out += `${stack
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n')}\n`;
  }
  return out;
}

/**
 * A pino destination (any object with `write`, pino's documented DestinationStream) that writes each entry readably
 * to `out`. Synchronous, as a terminal is: nothing is lost on exit.
 */
export function prettyDestination(out: NodeJS.WriteStream): { write(line: string): void } {
  const colors = typeof out.hasColors === 'function' && out.hasColors();
  return {
    write(line: string) {
      out.write(prettyLine(line, colors));
    },
  };
}
