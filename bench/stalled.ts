// Issue 16.5, "the dialer's slowest step is bounded": the call.started latency of (d) while 20 webhook endpoints time
// out (every attempt to them waits the full WEBHOOK_TIMEOUT_MS, 15 s) and the telephony provider takes 2 s to answer
// each call create. Its own service (DIALER=twilio against a local stand-in) on its own database.
//
// - The Twilio stand-in answers `POST .../Calls.json` after 2 s with a call sid, then sends the call's signed
//   `completed` status callback to the service half a second later (so calls end through the real callback route).
// - Black holes accept webhook requests and never answer; 20 of the 200 endpoints point at one each (20 hosts, as 20
//   customers' servers would be), each with a backlog of due deliveries, so that from the start each holds its 10
//   attempts in flight, 200 in all, and gets new ones as they time out.
// - The load: 50 triggers/s for 10 s per round (open loop), round robin over the other 180 accounts' keys; latency
//   from each trigger's intended send time to the receiver getting its call.started, every call of every round
//   pooled. One such round warms the freshly started service up first (logged and kept in the JSON, not in the
//   figures). The bench issues no VACUUM or ANALYZE: the database is as the service and autovacuum leave it.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type pg from 'pg';
import { twilioSignature } from '../src/routes/telephony/twilio.js';
import type { Bench } from './phases.js';
import type { Child } from './processes.js';
import type { Server } from './scenarios.js';
import * as scenario from './scenarios.js';
import { connect, createTenants, type BenchDatabase } from './setup.js';
import { describeStartedRound, roundRecord, startedRows, summarizeStarted } from './phases.js';

const SLOW_ENDPOINTS = 20;
const BACKLOG_PER_SLOW_ENDPOINT = 40;
const ANSWER_MS = 2_000;
const TALK_MS = 500;
const ACCOUNT_SID = `AC${randomBytes(16).toString('hex')}`;
const AUTH_TOKEN = randomBytes(16).toString('hex');
const PUBLIC_BASE_URL = 'https://bench.example.com';

interface Closable {
  url: string;
  close(): Promise<void>;
}

function listen(server: http.Server, sockets: Set<Socket>): Promise<string> {
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

async function closeAll(server: http.Server, sockets: Set<Socket>) {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
}

/** Accepts every request and never answers; `open` counts the requests it holds. */
export async function startBlackHole(): Promise<Closable & { open: () => number }> {
  const sockets = new Set<Socket>();
  let open = 0;
  const server = http.createServer((req) => {
    open++;
    req.resume();
    req.socket.once('close', () => open--);
  });
  const base = await listen(server, sockets);
  return { url: `${base}/hooks`, open: () => open, close: () => closeAll(server, sockets) };
}

/** Twilio's call create, answered after ANSWER_MS; the call's `completed` callback TALK_MS later, signed as Twilio signs. */
async function startTwilioStandIn(): Promise<Closable & { servicePort: number; creates: number; callbacks: number }> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, work: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      work();
    }, ms);
    timers.add(timer);
  };
  const callback = (statusUrl: string, sid: string) => {
    const params = { AccountSid: ACCOUNT_SID, CallSid: sid, CallStatus: 'completed', CallDuration: '1' };
    const body = new URLSearchParams(params).toString();
    const url = new URL(statusUrl);
    const request = http.request(
      {
        host: '127.0.0.1',
        port: standIn.servicePort,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          'x-forwarded-proto': 'https',
          'x-twilio-signature': twilioSignature(AUTH_TOKEN, statusUrl, params),
        },
      },
      (response) => {
        response.resume();
        if (response.statusCode === 204) standIn.callbacks++;
      },
    );
    request.on('error', () => undefined);
    request.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      const sid = `CA${randomBytes(16).toString('hex')}`;
      standIn.creates++;
      later(ANSWER_MS, () => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            sid,
            account_sid: ACCOUNT_SID,
            to: form.get('To'),
            from: form.get('From'),
            status: 'queued',
          }),
        );
        const status = form.get('StatusCallback');
        if (status) later(TALK_MS, () => callback(status, sid));
      });
    });
  });
  const url = await listen(server, sockets);
  const standIn = {
    url,
    servicePort: 0,
    creates: 0,
    callbacks: 0,
    async close() {
      for (const t of timers) clearTimeout(t);
      await closeAll(server, sockets);
    },
  };
  return standIn;
}

/** Due call.completed deliveries for the given accounts' endpoints (finished calls made for them), committed at once. */
async function createBacklog(db: pg.Client, accountIds: string[], perEndpoint: number) {
  await db.query(
    `
    WITH made AS (
      INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, not_before, expires_at, created_at, updated_at,
                         started_at, answered_at, ended_at, duration_seconds)
      SELECT gen_random_uuid(), a.id, a.default_agent_id, '+14155552671', '+14155550100', '{"bench":"stalled"}', 'completed', now(), now(),
             now(), now(), now(), now(), now(), 1
        FROM accounts a CROSS JOIN generate_series(1, $2) WHERE a.id = ANY($1::uuid[])
      RETURNING id, account_id),
    events AS (
      INSERT INTO call_events (id, call_id, from_status, to_status, source, occurred_at)
      SELECT gen_random_uuid(), id, 'in_progress', 'completed', 'bench', now() FROM made
      RETURNING id, call_id)
    INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, next_attempt_at)
    SELECT gen_random_uuid(), e.id, m.id, ev.id, 'call.completed', json_build_object('type', 'call.completed', 'data', json_build_object('call_id', m.id))::text, now()
      FROM made m JOIN events ev ON ev.call_id = m.id JOIN webhook_endpoints e ON e.account_id = m.account_id`,
    [accountIds, perEndpoint],
  );
}

async function liveCalls(db: pg.Client): Promise<number> {
  const {
    rows: [row],
  } = await db.query<{ live: number }>(
    `SELECT count(*)::int AS live FROM calls WHERE status IN ('initiated', 'dialing', 'in_progress')`,
  );
  return row!.live;
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`stalled scenario: ${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface StalledDeps {
  /** The service's environment as (d) runs it; the dialer settings are added here. */
  env: Record<string, string>;
  fresh: (label: string) => Promise<BenchDatabase>;
  serve: (name: string, env: Record<string, string>, database: BenchDatabase) => Promise<Child & Server>;
}

/** The service's per-account limit as (f) runs it (the default). */
const maxConcurrent = 10;

/** (f): (d) again, with 20 endpoints timing out and the provider answering each dial in 2 s. */
export async function stalledStartedLatency(b: Bench, deps: StalledDeps) {
  const database = await deps.fresh('stalled');
  const tenants = await createTenants(database.url, b.tenants.length, b.receiver.url);
  const db = await connect(database.url);
  const blackHoles = await Promise.all(Array.from({ length: SLOW_ENDPOINTS }, () => startBlackHole()));
  const held = () => blackHoles.reduce((n, h) => n + h.open(), 0);
  const standIn = await startTwilioStandIn();
  let service: (Child & Server) | null = null;
  try {
    const slow = tenants.slice(0, SLOW_ENDPOINTS);
    const healthy = tenants.slice(SLOW_ENDPOINTS);
    for (const [i, tenant] of slow.entries())
      await db.query('UPDATE webhook_endpoints SET url = $1 WHERE account_id = $2', [
        blackHoles[i]!.url,
        tenant.accountId,
      ]);
    service = await deps.serve(
      'service-stalled',
      {
        ...deps.env,
        DIALER: 'twilio',
        TWILIO_ACCOUNT_SID: ACCOUNT_SID,
        TWILIO_AUTH_TOKEN: AUTH_TOKEN,
        TWILIO_API_BASE_URL: standIn.url,
        PUBLIC_BASE_URL,
        AGENT_STREAM_URL: 'wss://agent.bench.example.com/stream',
      },
      database,
    );
    standIn.servicePort = service.port;
    await createBacklog(
      db,
      slow.map((t) => t.accountId),
      BACKLOG_PER_SLOW_ENDPOINT,
    );
    // Every slow endpoint at its cap of attempts in flight before the first trigger.
    await until('20 endpoints x 10 attempts held', () => held() >= SLOW_ENDPOINTS * 10, 30_000);
    b.log(
      `stalled: ${held()} webhook attempts held by ${SLOW_ENDPOINTS} endpoints that never answer; dials answered after ${ANSWER_MS} ms`,
    );
    // A round not in the figures: the service has just started (its first seconds, JIT and connections, are not
    // what this scenario is about). Logged, and kept in the JSON.
    const options = {
      rate: b.settings.latencyRate,
      seconds: b.settings.latencySeconds,
      maxConcurrent,
      waitIdle: false,
    };
    const warmUp = await scenario.startedLatency(service.port, healthy, b.receiver, db, options);
    await until('no live calls', async () => (await liveCalls(db)) === 0, 60_000);
    b.runs.stalledWarmUp = [roundRecord(warmUp)];
    b.log(describeStartedRound('stalled warm-up (not in the figures)', 1, warmUp));
    const rounds: scenario.StartedRound[] = [];
    for (let round = 1; round <= b.rounds; round++) {
      rounds.push(await scenario.startedLatency(service.port, healthy, b.receiver, db, options));
      // Calls end through the stand-in's callbacks (dial 2 s + talk 0.5 s): the next round starts with none live.
      await until('no live calls', async () => (await liveCalls(db)) === 0, 60_000);
      b.log(`${describeStartedRound('stalled', round, rounds.at(-1)!)}; ${held()} attempts held`);
    }
    const summary = summarizeStarted(rounds);
    b.runs.stalled = rounds.map(roundRecord);
    b.runs.stalledSummary = [summary];
    startedRows(
      b,
      '(f)',
      `(d) with ${SLOW_ENDPOINTS} webhook endpoints timing out and dials answered in ${ANSWER_MS / 1000} s, ${b.settings.latencyRate}/s over ${healthy.length} accounts (dials ${standIn.creates}, completed callbacks ${standIn.callbacks})`,
      summary,
    );
    const i = summary.immediate;
    const complete = summary.missing === 0;
    b.targets.push(
      {
        name: '(f) call.started p50 with stalled endpoints and dials, pooled',
        value: i.p50,
        unit: 'ms',
        target: '< 10 ms',
        met: i.p50 < 10 && complete,
      },
      {
        name: '(f) call.started p99 with stalled endpoints and dials, pooled',
        value: i.p99,
        unit: 'ms',
        target: '< 30 ms',
        met: i.p99 < 30 && complete,
      },
    );
  } finally {
    // Attempts held by the black hole fail at once, so the service stops without waiting out its timeouts.
    await Promise.all(blackHoles.map((h) => h.close()));
    await service?.stop();
    await standIn.close();
    await db.end();
  }
}
