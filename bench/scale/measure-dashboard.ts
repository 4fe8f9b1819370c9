// bench:scale (d): the dashboard's Overview (the landing page), the calls list (first page, a deep keyset page, a
// name search) and a call's detail view, over HTTP against the running service, signed in as the big account's user as a browser would be (session
// cookie, the form's CSRF token, the Origin of a form post), while triggers arrive at a fixed rate from the load
// generator: each page a warm-up first (before the load), then the pages in turn, one request at a time, for as long
// as the load runs; every request's time kept, so that runs can be pooled.
import { randomInt } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { NAME_SEARCH } from './names.js';

const WARM_UP = 20;
/** A cursor id above every uuid: the deep page starts with the calls at or before the cursor's instant. */
const MAX_UUID = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

interface Answer {
  status: number;
  body: string;
  location: string | undefined;
}

/**
 * A browser on one keep-alive connection: remembers its cookies (the session's and the CSRF secret's) and the last
 * CSRF token it saw. It comes through the proxy the service trusts (TLS_MODE=proxy) from an address of its own, as
 * browsers do: sign-ins are throttled per address (30 in 15 minutes, in Redis, shared by every service on it), and
 * every visitor would otherwise count against 127.0.0.1, two per dimension and run after run. The email is already
 * new for each build (bench/scale/data-tenants.ts dashboardEmail).
 */
export class HttpVisitor {
  private readonly cookies = new Map<string, string>();
  private csrf: string | null = null;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly host: string;
  /** In 198.18.0.0/15, the block RFC 2544 sets aside for benchmarks. */
  readonly address = `198.${18 + randomInt(2)}.${randomInt(256)}.${1 + randomInt(254)}`;

  constructor(private readonly port: number) {
    this.host = `127.0.0.1:${port}`;
  }

  request(method: 'GET' | 'POST', path: string, form?: Record<string, string>): Promise<Answer> {
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const headers: Record<string, string> = {
      host: this.host,
      'x-forwarded-proto': 'https',
      'x-forwarded-for': this.address,
      ...(this.cookies.size > 0
        ? { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') }
        : {}),
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
              const name = pair.slice(0, at);
              if (/Expires=Thu, 01 Jan 1970/i.test(line) || at === pair.length - 1) this.cookies.delete(name);
              else this.cookies.set(name, pair.slice(at + 1));
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

export interface PageSamples {
  name: string;
  path: string;
  status: number;
  bytes: number;
  /** Milliseconds per request, in order. */
  samples: number[];
}
export type DashboardPage = 'overview' | 'firstPage' | 'deepPage' | 'nameSearch' | 'detail';
export type DashboardSamples = Record<DashboardPage, PageSamples>;

export interface DashboardTarget {
  email: string;
  password: string;
  callId: string;
  deepCursorCreatedAt: string;
}

/**
 * With a signed-in visitor (one sign-in per database: sign-ins are throttled per email and per address, in Redis,
 * across runs), warms each page up, then starts `load` (the triggers) and, once `running()` says it is under way, requests
 * the pages in turn until it ends. Returns every request's time per page and what the load returned.
 */
export async function measureDashboardUnderLoad<L>(
  visitor: HttpVisitor,
  target: DashboardTarget,
  load: () => Promise<L>,
  running: () => Promise<boolean>,
): Promise<{ pages: DashboardSamples; load: L }> {
  const before = encodeURIComponent(`${new Date(target.deepCursorCreatedAt).toISOString()}_${MAX_UUID}`);
  const paths: Record<DashboardPage, [string, string]> = {
    overview: ['overview', '/dashboard'],
    firstPage: ['calls list, first page', '/dashboard/calls'],
    deepPage: ['calls list, deep keyset page', `/dashboard/calls?before=${before}`],
    nameSearch: [
      `calls list, name search "${NAME_SEARCH.prefix}"`,
      `/dashboard/calls?name=${encodeURIComponent(NAME_SEARCH.prefix)}`,
    ],
    detail: ['call detail', `/dashboard/calls/${target.callId}`],
  };
  const pages = Object.fromEntries(
    Object.entries(paths).map(([key, [name, path]]) => [key, { name, path, status: 0, bytes: 0, samples: [] }]),
  ) as unknown as DashboardSamples;
  for (const [, path] of Object.values(paths)) for (let i = 0; i < WARM_UP; i++) await visitor.request('GET', path);
  let done = false;
  const loaded = load().finally(() => (done = true));
  for (const deadline = performance.now() + 15_000; !done && performance.now() < deadline;) {
    if (await running()) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    while (!done) {
      for (const page of Object.values(pages)) {
        const started = performance.now();
        const answer = await visitor.request('GET', page.path);
        page.samples.push(performance.now() - started);
        page.status = answer.status;
        page.bytes = Buffer.byteLength(answer.body);
        if (answer.status !== 200) throw new Error(`dashboard ${page.name} (${page.path}): HTTP ${answer.status}`);
        if (done) break;
      }
    }
  } catch (error) {
    // The load runs to its end before the phase is given up: the next phase must not run beside it.
    await loaded.catch(() => undefined);
    throw error;
  }
  return { pages, load: await loaded };
}

export const DASHBOARD_SAMPLES = { warmUp: WARM_UP };
