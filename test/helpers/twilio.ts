// Twilio for tests: a local stand-in of Programmable Voice's REST API (the Calls resource: create and update, Basic
// auth, forms in, JSON out, errors in Twilio's shape), and callbacks signed with Twilio's own SDK, as Twilio sends
// them. Stopped when the file ends (file-end.ts).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import type { App } from '../../src/app.js';
import { atFileEnd } from './file-end.js';

export const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
export const TOKEN = 'test-token';
export const PUBLIC = 'https://calls.example.test';
export const STREAM = 'wss://agent.example.test/stream';
export const AGENT_PHONE = '+14155550100';
/** Creates of calls to this number are refused with Twilio's error 21211. */
export const REFUSED_TO = '+14155552699';

const running: TwilioStandIn[] = [];
atFileEnd(async () => {
  for (const standIn of running.splice(0)) await standIn.stop();
});

/** Twilio's Calls resource as far as the dialer uses it. */
export class TwilioStandIn {
  readonly creates: { form: URLSearchParams; sid: string }[] = [];
  /** Updates of live calls (POST .../Calls/{sid}.json), in order. */
  readonly updates: { sid: string; form: URLSearchParams }[] = [];
  /** Updates of these sids are refused as Twilio refuses a call that is over (21220). */
  readonly over = new Set<string>();
  private readonly gates = new Map<string, { passed: Promise<void>; open: () => void }>();
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    running.push(this);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop() {
    for (const to of [...this.gates.keys()]) this.release(to);
    this.server.closeAllConnections();
    if (this.server.listening) await new Promise((resolve) => this.server.close(resolve));
  }

  /** Creates for `to` are recorded at once but answered only after release(to). */
  hold(to: string) {
    let open!: () => void;
    this.gates.set(to, { passed: new Promise<void>((resolve) => (open = resolve)), open });
  }

  release(to: string) {
    this.gates.get(to)?.open();
    this.gates.delete(to);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const reply = (status: number, body: object) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const error = (status: number, code: number, message: string) =>
      reply(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
    const expected = `Basic ${Buffer.from(`${ACCOUNT_SID}:${TOKEN}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return error(401, 20003, 'Authenticate');
    const calls = `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls`;
    const update = req.url?.startsWith(`${calls}/`)
      ? /^\/(CA[0-9a-f]{32})\.json$/.exec(req.url.slice(calls.length))
      : null;
    if (
      req.method !== 'POST' ||
      (req.url !== `${calls}.json` && !update) ||
      !req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')
    ) {
      return error(404, 20404, 'The requested resource was not found');
    }
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    if (update) return this.update(update[1]!, form, reply, error);
    const sid = `CA${randomBytes(16).toString('hex')}`;
    this.creates.push({ form, sid });
    const to = form.get('To')!;
    if (to === REFUSED_TO) return error(400, 21211, "The 'To' number is not a valid phone number.");
    await this.gates.get(to)?.passed;
    reply(201, {
      sid,
      account_sid: ACCOUNT_SID,
      to,
      from: form.get('From'),
      status: 'queued',
      api_version: '2010-04-01',
      uri: `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls/${sid}.json`,
    });
  }

  private update(
    sid: string,
    form: URLSearchParams,
    reply: (status: number, body: object) => void,
    error: (status: number, code: number, message: string) => void,
  ) {
    if (!this.creates.some((c) => c.sid === sid))
      return error(
        404,
        20404,
        `The requested resource /2010-04-01/Accounts/${ACCOUNT_SID}/Calls/${sid}.json was not found`,
      );
    this.updates.push({ sid, form });
    if (this.over.has(sid)) return error(400, 21220, 'Call is not in-progress. Cannot redirect.');
    // Twilio's rule: TwiML or a URL to fetch it from, not both; a status of completed or canceled ends the call.
    if (form.has('Twiml') && form.has('Url')) return error(400, 21218, 'Invalid application sid / url / twiml');
    reply(200, {
      sid,
      account_sid: ACCOUNT_SID,
      status: form.get('Status') ?? 'in-progress',
      api_version: '2010-04-01',
    });
  }
}

/** Signs a callback as Twilio does (its SDK's own signature function). */
export function signLikeTwilio(token: string, url: string, params: Record<string, string>): string {
  return twilio.getExpectedTwilioSignature(token, url, params);
}

/** POSTs a callback to `/telephony/twilio/<kind>?call_id=...` (plus `query`), signed unless told otherwise. */
export function twilioCallback(
  app: App,
  kind: 'status' | 'twiml' | 'amd',
  callId: string,
  params: Record<string, string>,
  options: { query?: string; signature?: string | null; headers?: Record<string, string> } = {},
) {
  const path = `/telephony/twilio/${kind}?call_id=${callId}${options.query ?? ''}`;
  const sig = options.signature === undefined ? signLikeTwilio(TOKEN, `${PUBLIC}${path}`, params) : options.signature;
  return app.inject({
    method: 'POST',
    url: path,
    payload: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(sig === null ? {} : { 'x-twilio-signature': sig }),
      ...options.headers,
    },
  });
}

/** The environment of an app that dials through the stand-in. */
export function twilioEnv(apiBaseUrl: string): Record<string, string> {
  return {
    DIALER: 'twilio',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: TOKEN,
    TWILIO_API_BASE_URL: apiBaseUrl,
    PUBLIC_BASE_URL: PUBLIC,
    AGENT_STREAM_URL: STREAM,
    DISPATCH_ENABLED: 'true',
  };
}
