// A dashboard visitor for inject() tests: keeps the session cookie like a browser, sends the Origin a browser sends
// with a form, reads each page's CSRF token, and posts forms. Users with a known password, made fast.
import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import { createUser } from '../../src/admin/users.js';
import { hashPassword } from '../../src/domain/password.js';
import type { Role } from '../../src/domain/roles.js';
import { CSRF_COOKIE } from '../../plugins/dashboard/index.js';
import { SESSION_COOKIE } from '../../plugins/dashboard/session.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { storageOf } from '../helpers/database.js';
import type { PlanCapture } from '../helpers/plan-capture.js';
import type { Storage } from '../../src/storage/index.js';

/** The app is built with TLS_MODE=proxy: a request is https when it says so, as behind a TLS-terminating proxy. */
export const DASHBOARD_ENV = { TLS_MODE: 'proxy' } as const;
export const HOST = 'dash.example.test';
export const ORIGIN = `https://${HOST}`;
export const PASSWORD = 'correct horse battery staple';

/** As Eta's autoescape writes text into the page. */
export const html = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

/** A cheap hash for tests (verifying it takes a millisecond); `realCost` gives the service's own cost (timing tests). */
const CHEAP = { N: 2 ** 10, r: 8, p: 1 };
const hashes = new Map<string, Promise<string>>();

/**
 * A user of `accountId` whose password is `password` (default PASSWORD; one hash per password and cost per test file,
 * shared); `role` default owner. The hash is the cheap one unless `realCost`: one at the service's cost is slow by
 * design to make, and as slow at each sign-in (docs/performance.md#test-users-passwords).
 */
export async function createUserWithPassword(
  prisma: Storage | PrismaClient,
  accountId: string,
  email: string,
  options: { realCost?: boolean; role?: Role; password?: string } = {},
): Promise<string> {
  const storage = storageOf(prisma);
  // A test may give one address users in several agencies on purpose (callctl needs --allow-existing-email for that).
  const { id } = await createUser(storage, {
    accountId,
    email,
    actor: { kind: 'operator' },
    allowExistingEmail: true,
    now: new Date(),
    role: options.role,
  });
  const real = options.realCost ?? false;
  const password = options.password ?? PASSWORD;
  const key = `${real}:${password}`;
  if (!hashes.has(key)) hashes.set(key, real ? hashPassword(password) : hashPassword(password, CHEAP));
  await storage.users.setPasswordHash(id, await hashes.get(key)!);
  return id;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  location: string | undefined;
}

function decode(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export class Visitor {
  cookie: string | null = null;
  /** The CSRF secret's cookie, set by the first page with a form. */
  csrfCookie: string | null = null;
  ip = '203.0.113.7';
  lastCsrf: string | null = null;

  constructor(private readonly app: App) {}

  private remember(headers: Answer['headers']) {
    const setCookies = ([] as unknown[]).concat(headers['set-cookie'] ?? []) as string[];
    for (const line of setCookies) {
      const [pair = ''] = line.split(';');
      const [name, value = ''] = pair.split('=');
      const kept = /Expires=Thu, 01 Jan 1970/i.test(line) || value === '' ? null : value;
      if (name === SESSION_COOKIE) this.cookie = kept;
      if (name === CSRF_COOKIE) this.csrfCookie = kept;
    }
  }

  async request(
    method: 'GET' | 'POST',
    url: string,
    form?: Record<string, string>,
    extraHeaders: Record<string, string> = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {
      host: HOST,
      'x-forwarded-proto': 'https',
      'x-forwarded-for': this.ip,
      ...(this.cookieHeader() ? { cookie: this.cookieHeader() } : {}),
      ...(method === 'POST' ? { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...extraHeaders,
    };
    const res = await this.app.inject({
      method,
      url,
      headers,
      ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
    });
    this.remember(res.headers);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1];
    if (csrf) this.lastCsrf = csrf;
    return {
      status: res.statusCode,
      headers: res.headers,
      body: res.body,
      location: res.headers.location,
    };
  }

  /**
   * A GET whose body is read as it comes, chunk by chunk, as a browser downloads a file: the lines it counted (line
   * feeds), and its status. Not joined into one string, which for a 13 MB export cost the test's own process a
   * long turn of the loop that no real client makes the server pay.
   */
  async download(url: string): Promise<{ status: number; lines: number }> {
    const res = await this.app.inject({
      method: 'GET',
      url,
      headers: { host: HOST, 'x-forwarded-proto': 'https', 'x-forwarded-for': this.ip, cookie: this.cookieHeader() },
      payloadAsStream: true,
    });
    let lines = 0;
    for await (const chunk of res.stream() as AsyncIterable<Buffer>)
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
    return { status: res.statusCode, lines };
  }

  /** The Cookie header a browser would send (empty when it has none). */
  cookieHeader(): string {
    return [this.cookie && `${SESSION_COOKIE}=${this.cookie}`, this.csrfCookie && `${CSRF_COOKIE}=${this.csrfCookie}`]
      .filter(Boolean)
      .join('; ');
  }

  get(url: string) {
    return this.request('GET', url);
  }

  /**
   * GETs `page`, then posts `form` to `action` with what a browser would send besides: the named hidden fields of
   * that page's form for `action` (the CSRF token among them).
   */
  async submit(page: string, action: string, form: Record<string, string> = {}): Promise<Answer> {
    const { body } = await this.get(page);
    const forms = [...body.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)];
    const target = forms.find((f) => f[1] === action.replace(/&/g, '&amp;')) ?? forms[0];
    const hidden: Record<string, string> = {};
    for (const input of (target?.[2] ?? '').matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
      hidden[input[1]!] = decode(input[2]!);
    return this.request('POST', action, { _csrf: this.lastCsrf ?? '', ...hidden, ...form });
  }

  /**
   * Posts a multipart form (a file upload) to `action` as a browser does: the CSRF token of the last page, the
   * `fields`, then the file part.
   */
  async upload(
    action: string,
    file: { field: string; name: string; content: string | Buffer; type?: string },
    fields: Record<string, string> = {},
  ): Promise<Answer> {
    const boundary = `----oct-test-${Math.random().toString(36).slice(2)}`;
    const parts: Buffer[] = [];
    for (const [name, value] of Object.entries({ _csrf: this.lastCsrf ?? '', ...fields }))
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
          `Content-Type: ${file.type ?? 'text/csv'}\r\n\r\n`,
      ),
      Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    );
    const res = await this.app.inject({
      method: 'POST',
      url: action,
      headers: {
        host: HOST,
        'x-forwarded-proto': 'https',
        'x-forwarded-for': this.ip,
        cookie: this.cookieHeader(),
        origin: ORIGIN,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload: Buffer.concat(parts),
    });
    this.remember(res.headers);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1];
    if (csrf) this.lastCsrf = csrf;
    return { status: res.statusCode, headers: res.headers, body: res.body, location: res.headers.location };
  }

  async signIn(email: string, password = PASSWORD): Promise<Answer> {
    return this.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password });
  }
}

/**
 * The page at `path` as `visitor` gets it (200 expected), with the statements it sent and the plans they ran (phase
 * `path` of `capture`, started and stopped around it).
 */
export async function pageWithPlans(capture: PlanCapture, visitor: Visitor, path: string) {
  capture.start();
  try {
    const { result, plans } = await capture.plansDuring(path, () => visitor.get(path));
    const statements = capture.statements.filter((s) => s.phase === path);
    capture.statements.length = 0;
    expect(result.status).toBe(200);
    return { body: result.body, plans, statements };
  } finally {
    capture.stop();
  }
}
