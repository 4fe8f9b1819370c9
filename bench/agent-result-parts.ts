// The agent-result bench's pieces around the service: a Twilio stand-in that answers every call create at once, a
// webhook receiver that notes when each call's terminal event arrived and whether it carried a result, Twilio's
// signed status callbacks, the runtime's result as a realistic runtime would post it, and the forked load generator.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { twilioSignature } from '../src/routes/telephony/twilio.js';
import type { PreparedRequest, PreparedResult, PreparedSpec } from './agent-result-load.js';
import { wallNow } from './load.js';
import { ROOT } from './processes.js';

export const ACCOUNT_SID = `AC${randomBytes(16).toString('hex')}`;
export const AUTH_TOKEN = randomBytes(16).toString('hex');
export const PUBLIC_BASE_URL = 'https://bench.example.com';
// TLS_MODE=proxy: the listener is plain HTTP and the service insists on being told the client spoke https.
const HTTPS = { 'x-forwarded-proto': 'https' };

async function listen(server: http.Server): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

function readBody(req: http.IncomingMessage, done: (body: string) => void) {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => done(Buffer.concat(chunks).toString()));
}

/** A dialled call as the stand-in saw its create: Twilio's sid, where its status callbacks go, the number. */
export interface Dialled {
  sid: string;
  statusUrl: string;
  to: string;
}

/** Twilio's call create, answered at once (201, a sid); the calls it was asked to dial, by call_id. */
export async function startTwilioStandIn(): Promise<{
  url: string;
  dialled: Map<string, Dialled>;
  close(): Promise<void>;
}> {
  const dialled = new Map<string, Dialled>();
  const server = http.createServer((req, res) =>
    readBody(req, (text) => {
      const form = new URLSearchParams(text);
      const sid = `CA${randomBytes(16).toString('hex')}`;
      const statusUrl = form.get('StatusCallback');
      const callId = statusUrl ? new URL(statusUrl).searchParams.get('call_id') : null;
      if (statusUrl && callId) dialled.set(callId, { sid, statusUrl, to: form.get('To') ?? '' });
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ sid, account_sid: ACCOUNT_SID, to: form.get('To'), from: form.get('From'), status: 'queued' }),
      );
    }),
  );
  const { url, close } = await listen(server);
  return { url, dialled, close };
}

/** When each call's terminal event (call.completed or call.failed) arrived, and whether its data carried a result. */
export interface TerminalArrival {
  at: number;
  type: string;
  withResult: boolean;
}

export async function startTerminalReceiver(): Promise<{
  url: string;
  terminal: Map<string, TerminalArrival>;
  total: () => number;
  close(): Promise<void>;
}> {
  const terminal = new Map<string, TerminalArrival>();
  let total = 0;
  const server = http.createServer((req, res) =>
    readBody(req, (text) => {
      const at = wallNow();
      total++;
      const event = JSON.parse(text) as { type: string; data: { call_id: string; result?: unknown } };
      if ((event.type === 'call.completed' || event.type === 'call.failed') && !terminal.has(event.data.call_id))
        terminal.set(event.data.call_id, { at, type: event.type, withResult: (event.data.result ?? null) !== null });
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    }),
  );
  const { url, close } = await listen(server);
  return { url: `${url}/hooks`, terminal, total: () => total, close };
}

/** Twilio's status callback for the call, signed as Twilio signs it (over the public address and every parameter). */
export function statusCallback(
  callId: string,
  call: Dialled,
  callStatus: 'in-progress' | 'completed',
  more: Record<string, string> = {},
): PreparedRequest {
  const params = {
    AccountSid: ACCOUNT_SID,
    CallSid: call.sid,
    CallStatus: callStatus,
    Direction: 'outbound-api',
    To: call.to,
    ...more,
  };
  const url = new URL(call.statusUrl);
  if (url.searchParams.get('call_id') !== callId) throw new Error(`status callback of another call: ${call.statusUrl}`);
  return {
    method: 'POST',
    path: `${url.pathname}${url.search}`,
    headers: {
      ...HTTPS,
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilioSignature(AUTH_TOKEN, call.statusUrl, params),
    },
    body: new URLSearchParams(params).toString(),
  };
}

/** GET /agent-runtime/v1/calls/{id} with the call's context token. */
export function contextRequest(callId: string, token: string): PreparedRequest {
  return {
    method: 'GET',
    path: `/agent-runtime/v1/calls/${callId}`,
    headers: { ...HTTPS, authorization: `Bearer ${token}` },
  };
}

const SUMMARY =
  'The callee confirmed they are the account holder and asked about moving their annual service visit. They prefer ' +
  'a weekday morning because they work from home on Thursdays, and they asked that the technician call 30 minutes ' +
  'before arriving. The agent offered Thursday 10:00 or Friday 09:30; the callee took Thursday 10:00 and confirmed ' +
  'the address on file. They also asked whether the visit covers the second unit in the garage: the agent said it ' +
  'does under their plan and noted it for the technician. No complaint was raised; the callee was satisfied.';
const SPEAKERS = ['agent', 'callee'] as const;

/** POST .../result's body: an outcome, a ~500-character summary, 10 data keys, a 40-entry transcript, a recording. */
export function resultBody(n: number): string {
  const start = Date.UTC(2054, 11, 1, 10, 0, 0);
  return JSON.stringify({
    outcome: 'appointment_booked',
    summary: SUMMARY,
    data: {
      appointment_at: '2054-12-04T10:00:00-05:00',
      duration_minutes: 60,
      units: 2,
      callback_before_minutes: 30,
      address_confirmed: true,
      holder_confirmed: true,
      preferred_slot: 'weekday_morning',
      technician_note: 'Second unit in the garage; call 30 minutes before.',
      satisfaction: 5,
      crm_ticket: `T-${100000 + n}`,
    },
    transcript: Array.from({ length: 40 }, (_, i) => ({
      speaker: SPEAKERS[i % 2],
      text:
        i % 2
          ? 'Thursday morning works for me, ten o clock if you still have it, and please call before you come.'
          : 'I can offer Thursday at ten or Friday at half past nine. Which would suit you better?',
      at: new Date(start + i * 7_000).toISOString(),
    })),
    recording_url: `https://recordings.example.com/calls/${n}.mp3`,
  });
}

export function resultRequest(callId: string, token: string, n: number): PreparedRequest {
  return {
    method: 'POST',
    path: `/agent-runtime/v1/calls/${callId}/result`,
    headers: { ...HTTPS, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: resultBody(n),
  };
}

/** Runs one prepared open-loop job in a fresh child process (bench/agent-result-load.ts) and returns its result. */
export async function runPreparedProcess(spec: PreparedSpec): Promise<PreparedResult> {
  const child = fork(path.join(ROOT, 'bench', 'agent-result-load.ts'), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) =>
    child.exitCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
  try {
    const reply = await new Promise<{ ok: boolean; result?: PreparedResult; error?: string }>((resolve, reject) => {
      child.once('message', (m) => resolve(m as { ok: boolean; result?: PreparedResult; error?: string }));
      child.once('exit', (code) => reject(new Error(`load generator exited (${code}) without a result`)));
      child.send(spec);
    });
    if (!reply.ok || !reply.result) throw new Error(`load generator failed: ${reply.error}`);
    return reply.result;
  } finally {
    await exited;
  }
}
