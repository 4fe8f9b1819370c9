// Telnyx for tests: a local stand-in of Call Control v2 (dial, and the call commands the service sends: Bearer auth,
// JSON in and out, errors in Telnyx's shape), and the webhooks a real call sends (initiated, answered, machine
// verdicts, greeting ended, speak ended, hangup with each cause), signed as Telnyx signs them: ed25519 over
// `${timestamp}|${body}` with a key pair generated here, in telnyx-signature-ed25519 and telnyx-timestamp. It follows
// the service's commands as Telnyx would (settle): streaming_start opens a real WebSocket to the stream's URL with
// Telnyx's media-streaming frames, speak ends with call.speak.ended, hangup with call.hangup. Stopped when the file ends.
import { generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type { App } from '../../src/app.js';
import { atFileEnd } from './file-end.js';

export const TELNYX_API_KEY = 'KEY0123456789ABCDEF_test';
export const CONNECTION_ID = '1494404757140276705';
export const PUBLIC = 'https://calls.example.test';
export const STREAM = 'wss://agent.example.test/stream';
export const AGENT_PHONE = '+14155550100';
/** Dials to this number are refused as Telnyx refuses an invalid destination (422). */
export const REFUSED_TO = '+14155552699';

/** An ed25519 key pair as Telnyx holds one: the private key signs; the public key is base64 of its 32 raw bytes. */
export function telnyxKeyPair(): { privateKey: KeyObject; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // The SPKI encoding of an ed25519 key ends with the 32 bytes of the key itself (the portal shows those).
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKey: raw.toString('base64') };
}

/** Telnyx's signature of a webhook: base64 ed25519 of `${timestamp}|${body}`. */
export function signLikeTelnyx(privateKey: KeyObject, timestamp: number | string, body: string): string {
  return sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString('base64');
}

const running: TelnyxStandIn[] = [];
atFileEnd(async () => {
  for (const standIn of running.splice(0)) await standIn.stop();
});

export interface Dial {
  id: string;
  body: Record<string, unknown>;
}
export interface Command {
  id: string;
  action: string;
  body: Record<string, unknown>;
}
/** What a webhook got back from the service. */
export interface Delivered {
  statusCode: number;
  body: string;
}

export class TelnyxStandIn {
  readonly keys = telnyxKeyPair();
  readonly dials: Dial[] = [];
  /** Commands to calls (POST /v2/calls/{id}/actions/{action}), in order. */
  readonly commands: Command[] = [];
  /** Calls that are over: commands to them are refused (422, code 90018). */
  readonly over = new Set<string>();
  /** Media streams opened (streaming_start), by call_control_id. */
  readonly streams = new Map<string, TelnyxMediaStream>();
  /** Commands settle() has followed. */
  private followed = 0;
  private app: App | null = null;
  private readonly network = new Map<string, string>();
  private readonly gates = new Map<string, { passed: Promise<void>; open: () => void }>();
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  /**
   * A runtime that takes every stream AGENT_STREAM_URL (STREAM) leads to: it keeps each socket by the call_control_id
   * of its start frame, so that a test can end the conversation from the runtime's side (runtimeEnds).
   */
  private runtime: WebSocketServer | null = null;
  private readonly runtimeSockets = new Map<string, WebSocket>();

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    running.push(this);
    const runtime = await new Promise<WebSocketServer>((resolve) => {
      const server: WebSocketServer = new WebSocketServer({ host: '127.0.0.1', port: 0 }, () => resolve(server));
    });
    runtime.on('connection', (socket: WebSocket) =>
      socket.on('message', (data: Buffer) => {
        const frame = JSON.parse(data.toString()) as { event?: string; start?: { call_control_id?: string } };
        if (frame.event === 'start' && frame.start?.call_control_id)
          this.runtimeSockets.set(frame.start.call_control_id, socket);
      }),
    );
    this.runtime = runtime;
    this.reach(STREAM, `ws://127.0.0.1:${(runtime.address() as AddressInfo).port}/stream`);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop() {
    for (const stream of this.streams.values()) stream.socket.terminate();
    this.streams.clear();
    if (this.runtime) {
      for (const socket of this.runtime.clients) socket.terminate();
      await new Promise((resolve) => this.runtime!.close(resolve));
      this.runtime = null;
    }
    for (const to of [...this.gates.keys()]) this.release(to);
    this.server.closeAllConnections();
    if (this.server.listening) await new Promise((resolve) => this.server.close(resolve));
  }

  /** Webhooks for PUBLIC go to this app (inject), unless reach() routes them over the network. */
  attach(app: App) {
    this.app = app;
  }

  /** Where the public address `from` leads on this machine (a prefix replaced): the service, a runtime's stream. */
  reach(from: string, to: string) {
    this.network.set(from, to);
  }

  /** Dials to `to` are recorded at once but answered only after release(to). */
  hold(to: string) {
    let open!: () => void;
    this.gates.set(to, { passed: new Promise<void>((resolve) => (open = resolve)), open });
  }

  release(to: string) {
    this.gates.get(to)?.open();
    this.gates.delete(to);
  }

  dialOf(id: string): Dial {
    const dial = this.dials.find((d) => d.id === id);
    if (!dial) throw new Error(`no call ${id} was dialled`);
    return dial;
  }

  /**
   * The dial of the service's call `callId` (its latest attempt, or `attempt`), read from its client_state: the way a
   * test that knows only the call's id (the matrix of every carrier) finds the call_control_id to answer or end.
   */
  dialFor(callId: string, attempt?: number): Dial | undefined {
    return this.dials.findLast((d) => {
      const state = JSON.parse(Buffer.from(String(d.body.client_state), 'base64').toString()) as {
        c: string;
        a: number;
      };
      return state.c === callId && (attempt === undefined || state.a === attempt);
    });
  }

  commandsOf(id: string): Command[] {
    return this.commands.filter((c) => c.id === id);
  }

  /**
   * The webhook `type` of call `id` with Telnyx's envelope and the call's fields, signed (or as `options` say).
   * `age` is how many seconds old its telnyx-timestamp is when sent (negative: in the future), read at sending so a
   * slow runner cannot move it back inside the SDK's tolerance.
   */
  async event(
    id: string,
    type: string,
    extra: Record<string, unknown> = {},
    options: { age?: number; signature?: string | null; keyPair?: { privateKey: KeyObject } } = {},
  ): Promise<Delivered> {
    const dial = this.dialOf(id);
    const body = JSON.stringify({
      data: {
        record_type: 'event',
        event_type: type,
        id: randomUUID(),
        occurred_at: new Date().toISOString(),
        payload: {
          call_control_id: id,
          connection_id: CONNECTION_ID,
          call_leg_id: legOf(id),
          call_session_id: legOf(id),
          client_state: dial.body.client_state,
          from: dial.body.from,
          to: dial.body.to,
          direction: 'outgoing',
          ...extra,
        },
      },
      meta: { attempt: 1, delivered_to: dial.body.webhook_url },
    });
    const timestamp = Math.floor(Date.now() / 1000) - (options.age ?? 0);
    const signature =
      options.signature === undefined
        ? signLikeTelnyx((options.keyPair ?? this.keys).privateKey, timestamp, body)
        : options.signature;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'telnyx-timestamp': String(timestamp),
      ...(signature === null ? {} : { 'telnyx-signature-ed25519': signature }),
    };
    return this.post(String(dial.body.webhook_url), headers, body);
  }

  initiated(id: string) {
    return this.expectOk(this.event(id, 'call.initiated', { state: 'bridging' }));
  }

  /** The callee picks up: call.answered, then the service's commands followed (the hand-off's stream opens). */
  async answer(id: string): Promise<{ stream: TelnyxMediaStream | null; transfer: Command | null }> {
    await this.expectOk(this.event(id, 'call.answered', { state: 'answered', start_time: new Date().toISOString() }));
    await this.settle(id);
    return {
      stream: this.streams.get(id) ?? null,
      transfer: this.commandsOf(id).find((c) => c.action === 'transfer') ?? null,
    };
  }

  /** Premium detection's verdict (human_residence, human_business, machine, fax_detected, silence, not_sure). */
  async machine(id: string, result: string, options: { standard?: boolean } = {}) {
    const type = options.standard ? 'call.machine.detection.ended' : 'call.machine.premium.detection.ended';
    await this.expectOk(this.event(id, type, { result }));
    await this.settle(id);
  }

  /** The machine's greeting is over (premium: beep_detected | no_beep_detected). */
  async greetingEnded(id: string, result = 'beep_detected', options: { standard?: boolean } = {}) {
    const type = options.standard ? 'call.machine.greeting.ended' : 'call.machine.premium.greeting.ended';
    await this.expectOk(this.event(id, type, { result }));
    await this.settle(id);
  }

  /**
   * The call ends with `cause` (normal_clearing, user_busy, timeout, no_answer, call_rejected, not_found,
   * originator_cancel, time_limit, unspecified): the stream's stop frame, then call.hangup.
   */
  async hangUp(id: string, cause = 'normal_clearing', options: { source?: string; sip?: string } = {}) {
    if (this.over.has(id)) return;
    this.over.add(id);
    const stream = this.streams.get(id);
    this.streams.delete(id);
    await stream?.stop();
    await this.expectOk(
      this.event(id, 'call.hangup', {
        state: 'hangup',
        hangup_cause: cause,
        hangup_source: options.source ?? (cause === 'normal_clearing' ? 'callee' : 'unknown'),
        sip_hangup_cause: options.sip ?? SIP_CAUSES[cause] ?? 'unspecified',
        start_time: new Date().toISOString(),
      }),
    );
  }

  /**
   * The runtime behind AGENT_STREAM_URL ends the conversation by closing its socket: Telnyx sees the stream end
   * (streaming.stopped), and the service's commands are followed (it hangs the call up, as Twilio would).
   */
  async runtimeEnds(id: string) {
    const stream = this.streams.get(id);
    const socket = this.runtimeSockets.get(id);
    if (!stream || !socket) throw new Error(`no stream of ${id} reached the stand-in's runtime`);
    socket.close(1000);
    await stream.closed;
    this.streams.delete(id);
    await this.expectOk(this.event(id, 'streaming.stopped', {}));
    await this.settle(id);
  }

  /**
   * Follows the service's commands not yet followed, as Telnyx would: streaming_start opens the stream (and sends
   * streaming.started), streaming_stop closes it, speak is spoken (call.speak.started, then call.speak.ended), hangup
   * ends the call (call.hangup normal_clearing, by the caller). Commands a webhook leads to are followed too.
   */
  async settle(id?: string) {
    while (this.followed < this.commands.length) {
      const command = this.commands[this.followed++]!;
      if ((id !== undefined && command.id !== id) || this.over.has(command.id)) continue;
      await this.follow(command);
    }
  }

  private async follow({ id, action, body }: Command) {
    if (action === 'streaming_start') {
      const parameters = Object.fromEntries(
        (body.custom_parameters as { name: string; value: string }[]).map((p) => [p.name, p.value]),
      );
      const url = this.route(String(body.stream_url));
      // Only an address reach() leads somewhere is tried (AGENT_STREAM_URL leads to the stand-in's own runtime): the
      // others fail as Telnyx reports a stream it cannot open.
      if (url === body.stream_url)
        return void (await this.expectOk(this.event(id, 'streaming.failed', { failure_reason: 'connection failed' })));
      const stream = await TelnyxMediaStream.open(url, id, this.dialOf(id), parameters);
      this.streams.set(id, stream);
      stream.media(3);
      await this.expectOk(this.event(id, 'streaming.started', { stream_url: body.stream_url }));
    } else if (action === 'streaming_stop') {
      const stream = this.streams.get(id);
      this.streams.delete(id);
      await stream?.stop();
      if (stream) await this.expectOk(this.event(id, 'streaming.stopped', {}));
    } else if (action === 'speak') {
      await this.expectOk(this.event(id, 'call.speak.started', {}));
      await this.expectOk(this.event(id, 'call.speak.ended', { status: 'completed' }));
    } else if (action === 'hangup') {
      await this.hangUp(id, 'normal_clearing', { source: 'caller' });
    }
  }

  private route(url: string): string {
    for (const [from, to] of this.network) if (url.startsWith(from)) return to + url.slice(from.length);
    return url;
  }

  private async post(url: string, headers: Record<string, string>, body: string): Promise<Delivered> {
    const routed = this.route(url);
    if (routed === url && url.startsWith(PUBLIC) && this.app) {
      const response = await this.app.inject({ method: 'POST', url: url.slice(PUBLIC.length), headers, payload: body });
      return { statusCode: response.statusCode, body: response.body };
    }
    const response = await fetch(routed, { method: 'POST', headers, body });
    return { statusCode: response.status, body: await response.text() };
  }

  private async expectOk(delivered: Promise<Delivered>): Promise<Delivered> {
    const response = await delivered;
    if (response.statusCode >= 300)
      throw new Error(`the service answered a webhook with ${response.statusCode}: ${response.body}`);
    return response;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const reply = (status: number, body: object) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const error = (status: number, code: string, title: string, detail: string) =>
      reply(status, { errors: [{ code, title, detail }] });
    if (req.headers.authorization !== `Bearer ${TELNYX_API_KEY}`)
      return error(401, '10009', 'Authentication failed', 'Could not understand the provided credentials.');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
    } catch {
      return error(400, '10015', 'Bad Request', 'The request body is not valid JSON.');
    }
    const action = /^\/v2\/calls\/([^/]+)\/actions\/([a-z_]+)$/.exec(req.url ?? '');
    if (req.method !== 'POST' || (req.url !== '/v2/calls' && !action))
      return error(404, '10005', 'Resource not found', 'The requested resource or URL could not be found.');
    if (action) {
      const id = decodeURIComponent(action[1]!);
      if (!this.dials.some((d) => d.id === id))
        return error(404, '10005', 'Resource not found', 'The requested resource or URL could not be found.');
      this.commands.push({ id, action: action[2]!, body });
      if (this.over.has(id))
        return error(
          422,
          '90018',
          'Call has already ended',
          "This call is no longer active and can't receive commands.",
        );
      return reply(200, { data: { result: 'ok' } });
    }
    const id = `v3:${randomBytes(24).toString('base64url')}`;
    this.dials.push({ id, body });
    if (body.to === REFUSED_TO)
      return error(422, '10016', 'Phone number must be in +E.164 format', "The 'to' number is not a valid number.");
    await this.gates.get(String(body.to))?.passed;
    reply(200, {
      data: {
        record_type: 'call',
        call_control_id: id,
        call_leg_id: legOf(id),
        call_session_id: legOf(id),
        is_alive: false,
      },
    });
  }
}

/** Telnyx's sip_hangup_cause beside each hangup_cause, as its webhooks show them. */
const SIP_CAUSES: Record<string, string> = {
  normal_clearing: 'unspecified',
  user_busy: '486',
  timeout: '408',
  no_answer: '480',
  call_rejected: '603',
  not_found: '404',
  originator_cancel: '487',
  unspecified: '500',
};

function legOf(id: string): string {
  const hex = Buffer.from(id).toString('hex').padEnd(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * One media-streaming WebSocket as Telnyx opens it (developers.telnyx.com, "Stream call media over WebSocket"):
 * `connected`, `start` (the call, its client_state and the streaming_start's custom_parameters), `media` frames of
 * base64 PCMU at 8 kHz, `stop`. What the runtime sends back is kept.
 */
export class TelnyxMediaStream {
  readonly streamId = randomUUID();
  readonly received: { event?: string; [key: string]: unknown }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private sequence = 0;
  private chunk = 0;

  private constructor(
    readonly socket: WebSocket,
    readonly callControlId: string,
    readonly customParameters: Record<string, string>,
  ) {
    socket.on('message', (data: Buffer) => this.received.push(JSON.parse(data.toString()) as { event?: string }));
    this.closed = new Promise((resolve) =>
      socket.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
    );
  }

  static async open(url: string, id: string, dial: Dial, customParameters: Record<string, string>) {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const stream = new TelnyxMediaStream(socket, id, customParameters);
    stream.send({ event: 'connected', version: '1.0.0' });
    stream.send({
      event: 'start',
      sequence_number: stream.next(),
      stream_id: stream.streamId,
      start: {
        user_id: randomUUID(),
        call_control_id: id,
        call_session_id: legOf(id),
        from: dial.body.from,
        to: dial.body.to,
        client_state: dial.body.client_state,
        custom_parameters: customParameters,
        media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 },
      },
    });
    return stream;
  }

  media(count: number) {
    for (let i = 0; i < count; i++) {
      this.chunk++;
      this.send({
        event: 'media',
        sequence_number: this.next(),
        media: {
          track: 'inbound',
          chunk: String(this.chunk),
          timestamp: String((this.chunk - 1) * 20),
          payload: Buffer.alloc(160, 0xff).toString('base64'),
        },
        stream_id: this.streamId,
      });
    }
  }

  async stop() {
    if (this.socket.readyState === WebSocket.OPEN) {
      this.send({
        event: 'stop',
        sequence_number: this.next(),
        stop: { user_id: randomUUID(), call_control_id: this.callControlId },
        stream_id: this.streamId,
      });
      this.socket.close(1000);
    }
    await this.closed;
  }

  private next(): string {
    return String(++this.sequence);
  }

  private send(message: object) {
    this.socket.send(JSON.stringify(message));
  }
}

/** The environment of an app that dials through the stand-in. */
export function telnyxEnv(apiBaseUrl: string, publicKey: string): Record<string, string> {
  return {
    DIALER: 'telnyx',
    TELNYX_API_KEY,
    TELNYX_PUBLIC_KEY: publicKey,
    TELNYX_CONNECTION_ID: CONNECTION_ID,
    TELNYX_API_BASE_URL: apiBaseUrl,
    PUBLIC_BASE_URL: PUBLIC,
    AGENT_STREAM_URL: STREAM,
    DISPATCH_ENABLED: 'true',
  };
}
