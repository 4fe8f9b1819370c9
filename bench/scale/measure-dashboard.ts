// bench:scale (d): the dashboard's calls list (first page, a deep keyset page) and a call's detail view, over HTTP
// against the running service, signed in as the big account's user as a browser would be (session cookie, the form's
// CSRF token, the Origin of a form post). Each request: a warm-up, then sequential requests, median and p99.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { SESSION_COOKIE } from '../../plugins/dashboard/session.js';
import { percentiles, type Percentiles } from '../stats.js';

const WARM_UP = 20;
const REQUESTS = 50;
/** A cursor id above every uuid: the deep page starts with the calls at or before the cursor's instant. */
const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

interface Answer {
  status: number;
  body: string;
  location: string | undefined;
}

/** A browser on one keep-alive connection: remembers the session cookie and the last CSRF token it saw. */
class HttpVisitor {
  private cookie: string | null = null;
  private csrf: string | null = null;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly host: string;

  constructor(private readonly port: number) {
    this.host = `127.0.0.1:${port}`;
  }

  request(method: 'GET' | 'POST', path: string, form?: Record<string, string>): Promise<Answer> {
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const headers: Record<string, string> = {
      host: this.host,
      'x-forwarded-proto': 'https',
      ...(this.cookie ? { cookie: `${SESSION_COOKIE}=${this.cookie}` } : {}),
      ...(body !== undefined
        ? {
            origin: `https://${this.host}`,
            'content-type': 'application/x-www-form-urlencoded',
            'content-length': String(Buffer.byteLength(body)),
          }
        : {}),
    };
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: this.port, method, path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            for (const line of res.headers['set-cookie'] ?? []) {
              const [pair = ''] = line.split(';');
              const at = pair.indexOf('=');
              if (pair.slice(0, at) === SESSION_COOKIE)
                this.cookie =
                  /Expires=Thu, 01 Jan 1970/i.test(line) || at === pair.length - 1 ? null : pair.slice(at + 1);
            }
            const text = Buffer.concat(chunks).toString();
            this.csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? this.csrf;
            resolve({ status: res.statusCode ?? 0, body: text, location: res.headers.location });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  async signIn(email: string, password: string) {
    await this.request('GET', '/dashboard/sign-in');
    const answer = await this.request('POST', '/dashboard/sign-in', {
      _csrf: this.csrf ?? '',
      next: '/dashboard',
      email,
      password,
    });
    if (answer.status !== 303) throw new Error(`dashboard sign-in: HTTP ${answer.status}`);
  }

  close() {
    this.agent.destroy();
  }
}

export interface PageFigures extends Percentiles {
  name: string;
  path: string;
  status: number;
  rows: number;
  bytes: number;
}
export type DashboardFigures = Record<'firstPage' | 'deepPage' | 'detail', PageFigures>;

async function measure(visitor: HttpVisitor, name: string, path: string): Promise<PageFigures> {
  for (let i = 0; i < WARM_UP; i++) await visitor.request('GET', path);
  const samples: number[] = [];
  let last: Answer = { status: 0, body: '', location: undefined };
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    last = await visitor.request('GET', path);
    samples.push(performance.now() - started);
  }
  if (last.status !== 200) throw new Error(`dashboard ${name} (${path}): HTTP ${last.status}`);
  const rows = [...last.body.matchAll(/<tr><td><a href="\/dashboard\/calls\//g)].length;
  return { name, path, status: last.status, rows, bytes: Buffer.byteLength(last.body), ...percentiles(samples) };
}

export interface DashboardTarget {
  email: string;
  password: string;
  callId: string;
  deepCursorCreatedAt: string;
}

/** Signs in, then the first page, the deep keyset page and the detail view, each WARM_UP + REQUESTS times. */
export async function measureDashboard(port: number, target: DashboardTarget): Promise<DashboardFigures> {
  const visitor = new HttpVisitor(port);
  try {
    await visitor.signIn(target.email, target.password);
    const before = encodeURIComponent(`${new Date(target.deepCursorCreatedAt).toISOString()}_${MAX_UUID}`);
    return {
      firstPage: await measure(visitor, 'calls list, first page', '/dashboard/calls'),
      deepPage: await measure(visitor, 'calls list, deep keyset page', `/dashboard/calls?before=${before}`),
      detail: await measure(visitor, 'call detail', `/dashboard/calls/${target.callId}`),
    };
  } finally {
    visitor.close();
  }
}

export const DASHBOARD_SAMPLES = { warmUp: WARM_UP, requests: REQUESTS };
