// A local stand-in of a carrier that speaks Twilio's API (Twilio, SignalWire's LaML): the Calls resource (create and
// update, Basic auth, forms in, JSON out, errors in Twilio's shape) under the carrier's API path, and the callbacks as
// the carrier sends them, signed its way. It answers a call as the carrier does: status callbacks, the signed TwiML
// fetched from the call's Url, and for a <Connect><Stream> a real WebSocket to the stream's URL with Media Streams'
// messages (connected, start with the TwiML's parameters, media, stop). Its lifecycle steps (answer, complete, busy,
// noAnswer, fail, machine) are the same on every such carrier. Stopped when the file ends (file-end.ts).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DOMParser } from '@xmldom/xmldom';
import WebSocket from 'ws';
import { atFileEnd } from './file-end.js';

/** What tells one Twilio-like carrier's stand-in from another's. */
export interface StandInCarrier {
  /** The API version's path: the Calls resource is `{apiPath}/Accounts/{accountSid}/Calls`. */
  apiPath: string;
  /** Basic auth's user and password, and the account in the path. */
  accountSid: string;
  token: string;
  /** A new call's sid, and the shape of one in an update's path. */
  newSid(): string;
  sidPattern: RegExp;
  /** Where an error's more_info points. */
  errorInfo(code: number): string;
  /** The headers that sign a callback to `url` (as the carrier was given it) with `params`, as the carrier signs. */
  sign(url: string, params: Record<string, string>): Record<string, string>;
}

/** The service's public address, the runtime's stream and the agent's caller ID, on every carrier's stand-in. */
export const PUBLIC = 'https://calls.example.test';
export const STREAM = 'wss://agent.example.test/stream';
export const AGENT_PHONE = '+14155550100';
/** Creates of calls to this number are refused with Twilio's error 21211. */
export const REFUSED_TO = '+14155552699';

const running: TwilioCompatibleStandIn[] = [];
atFileEnd(async () => {
  for (const standIn of running.splice(0)) await standIn.stop();
});

/** A Twilio-like carrier's Calls resource as far as the dialer uses it, and its calls' lifecycle. */
export class TwilioCompatibleStandIn {
  /** Creates of calls, in order: the form, the sid given, and the path and Authorization header they came with. */
  readonly creates: { form: URLSearchParams; sid: string; path: string; authorization: string }[] = [];
  /** Updates of live calls (POST .../Calls/{sid}.json), in order. */
  readonly updates: { sid: string; form: URLSearchParams }[] = [];
  /** Updates of these sids are refused as Twilio refuses a call that is over (21220). */
  readonly over = new Set<string>();
  /** Calls answered (answer()) and not yet hung up, by sid. */
  readonly live = new Map<string, AnsweredCall>();
  /** Where public addresses lead on this machine: prefix -> local prefix (reach()). */
  private readonly network = new Map<string, string>();
  private readonly gates = new Map<string, { passed: Promise<void>; open: () => void }>();
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  constructor(readonly carrier: StandInCarrier) {}

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    running.push(this);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop() {
    for (const call of this.live.values()) call.stream?.socket.terminate();
    this.live.clear();
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

  /**
   * Where the public address `from` (the service's PUBLIC_BASE_URL, a runtime's wss:// stream URL) leads on this
   * machine: Twilio reaches them over the internet, the stand-in at `to` (a prefix replaced).
   */
  reach(from: string, to: string) {
    this.network.set(from, to);
  }

  private route(url: string): string {
    for (const [from, to] of this.network) if (url.startsWith(from)) return to + url.slice(from.length);
    return url;
  }

  /**
   * Answers the call `sid` as Twilio does when the callee picks up: its status callbacks (ringing, in-progress), then
   * the TwiML fetched from the create's Url (POST, signed), then what that TwiML says. A <Connect><Stream> opens a
   * WebSocket to the stream's URL and sends `connected`, `start` (with the TwiML's <Parameter>s as customParameters)
   * and `mediaFrames` media messages of 20 ms of silence; a <Dial><Sip> is recorded; anything else ends the call.
   */
  async answer(sid: string, options: { mediaFrames?: number } = {}): Promise<AnsweredCall> {
    const create = this.creates.find((c) => c.sid === sid);
    if (!create) throw new Error(`no call ${sid} was created`);
    const base = this.base(create);
    const statusUrl = create.form.get('StatusCallback')!;
    await this.callback(statusUrl, { ...base, CallStatus: 'ringing', CallbackSource: 'call-progress-events' });
    await this.callback(statusUrl, { ...base, CallStatus: 'in-progress', CallbackSource: 'call-progress-events' });
    const twiml = await this.callback(create.form.get('Url')!, { ...base, CallStatus: 'in-progress' });
    const document = new DOMParser().parseFromString(twiml, 'text/xml');
    const streamTag = document.getElementsByTagName('Stream').item(0);
    const sipTag = document.getElementsByTagName('Sip').item(0);
    const answered: AnsweredCall = { sid, twiml, stream: null, sip: sipTag?.textContent?.trim() ?? null };
    this.live.set(sid, answered);
    if (streamTag) {
      const parameters: Record<string, string> = {};
      for (const p of Array.from(streamTag.getElementsByTagName('Parameter')))
        parameters[p.getAttribute('name')!] = p.getAttribute('value')!;
      answered.stream = await MediaStream.open(
        this.route(streamTag.getAttribute('url')!),
        sid,
        parameters,
        this.carrier.accountSid,
      );
      answered.stream.media(options.mediaFrames ?? 3);
    } else if (!sipTag) {
      await this.hangUp(sid, { duration: 0 });
    }
    return answered;
  }

  /**
   * The callee hangs up: the stream's `stop` and the WebSocket closed (as Twilio closes it), then the status
   * callback of the call's end (completed, with its duration).
   */
  async hangUp(sid: string, options: { duration?: number } = {}) {
    const create = this.creates.find((c) => c.sid === sid);
    if (!create) throw new Error(`no call ${sid} was created`);
    const call = this.live.get(sid);
    this.live.delete(sid);
    await call?.stream?.stop();
    await this.callback(create.form.get('StatusCallback')!, {
      ...this.base(create),
      CallStatus: 'completed',
      CallDuration: String(options.duration ?? 4),
      CallbackSource: 'call-progress-events',
    });
  }

  /** The callee hangs up after talking: hangUp under the name every carrier's stand-in gives it. */
  complete(sid: string, options: { duration?: number } = {}) {
    return this.hangUp(sid, options);
  }

  /** The callee's line is busy: ringing, then the call ends busy. */
  busy(sid: string) {
    return this.end(sid, 'busy');
  }

  /** Nobody picks up: ringing, then the call ends unanswered. */
  noAnswer(sid: string) {
    return this.end(sid, 'no-answer');
  }

  /** The carrier could not place the call (a bad route, say): it ends failed. */
  fail(sid: string) {
    return this.end(sid, 'failed');
  }

  /**
   * A machine answered the call (answer() first): the answering-machine verdict POSTed to the create's
   * AsyncAmdStatusCallback, as the carrier sends it once the greeting is over. If the service then changed the call so
   * that it ends (TwiML ending in <Hangup/>, or status completed), the call ends as the carrier ends it: the stream
   * stops and the completed callback follows.
   */
  async machine(sid: string, options: { answeredBy?: string; duration?: number } = {}) {
    const create = this.createOf(sid);
    const url = create.form.get('AsyncAmdStatusCallback');
    if (!url) throw new Error(`call ${sid} was dialled without answering-machine detection`);
    const before = this.updates.length;
    await this.callback(url, {
      ...this.base(create),
      AnsweredBy: options.answeredBy ?? 'machine_end_beep',
      MachineDetectionDuration: '4120',
    });
    const ending = this.updates
      .slice(before)
      .some(
        (u) =>
          u.sid === sid &&
          !this.over.has(sid) &&
          (u.form.get('Status') === 'completed' || /<Hangup\/>\s*<\/Response>\s*$/.test(u.form.get('Twiml') ?? '')),
      );
    if (ending) await this.hangUp(sid, { duration: options.duration ?? 9 });
  }

  /** The create that placed the call `sid`. */
  createOf(sid: string) {
    const create = this.creates.find((c) => c.sid === sid);
    if (!create) throw new Error(`no call ${sid} was created`);
    return create;
  }

  /** The create of our call `callId` (its Url names it), once the dialer made it. */
  createFor(callId: string) {
    return this.creates.find((c) => new URL(c.form.get('Url')!).searchParams.get('call_id') === callId);
  }

  /** The parameters every callback about the call carries. */
  private base(create: { form: URLSearchParams; sid: string }) {
    return {
      CallSid: create.sid,
      AccountSid: this.carrier.accountSid,
      From: create.form.get('From')!,
      To: create.form.get('To')!,
      Direction: 'outbound-api',
      ApiVersion: '2010-04-01',
    };
  }

  /** Ringing, then the call's end with `status`, never answered. */
  private async end(sid: string, status: 'busy' | 'no-answer' | 'failed') {
    const create = this.createOf(sid);
    const url = create.form.get('StatusCallback')!;
    const base = { ...this.base(create), CallbackSource: 'call-progress-events' };
    if (status !== 'failed') await this.callback(url, { ...base, CallStatus: 'ringing' });
    await this.callback(url, { ...base, CallStatus: status, CallDuration: '0' });
  }

  /** POSTs a callback to the service as the carrier does (signed over the URL it was given); resolves with the body. */
  private async callback(url: string, params: Record<string, string>): Promise<string> {
    const response = await fetch(this.route(url), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...this.carrier.sign(url, params),
      },
      body: new URLSearchParams(params),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`the service answered ${url} with ${response.status}: ${text}`);
    return text;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const reply = (status: number, body: object) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const { accountSid, token, apiPath } = this.carrier;
    const error = (status: number, code: number, message: string) =>
      reply(status, { code, message, more_info: this.carrier.errorInfo(code), status });
    const expected = `Basic ${Buffer.from(`${accountSid}:${token}`).toString('base64')}`;
    if (req.headers.authorization !== expected) return error(401, 20003, 'Authenticate');
    const calls = `${apiPath}/Accounts/${accountSid}/Calls`;
    const sid = req.url?.startsWith(`${calls}/`) ? req.url.slice(calls.length + 1, -'.json'.length) : null;
    const update = sid !== null && req.url!.endsWith('.json') && this.carrier.sidPattern.test(sid) ? sid : null;
    if (
      req.method !== 'POST' ||
      (req.url !== `${calls}.json` && !update) ||
      !req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')
    ) {
      return error(404, 20404, 'The requested resource was not found');
    }
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    if (update) return this.update(update, form, reply, error);
    const newSid = this.carrier.newSid();
    this.creates.push({ form, sid: newSid, path: req.url!, authorization: req.headers.authorization });
    const to = form.get('To')!;
    if (to === REFUSED_TO) return error(400, 21211, "The 'To' number is not a valid phone number.");
    await this.gates.get(to)?.passed;
    reply(201, {
      sid: newSid,
      account_sid: accountSid,
      to,
      from: form.get('From'),
      status: 'queued',
      api_version: '2010-04-01',
      uri: `${calls}/${newSid}.json`,
    });
  }

  private update(
    sid: string,
    form: URLSearchParams,
    reply: (status: number, body: object) => void,
    error: (status: number, code: number, message: string) => void,
  ) {
    const { apiPath, accountSid } = this.carrier;
    if (!this.creates.some((c) => c.sid === sid))
      return error(
        404,
        20404,
        `The requested resource ${apiPath}/Accounts/${accountSid}/Calls/${sid}.json was not found`,
      );
    this.updates.push({ sid, form });
    if (this.over.has(sid)) return error(400, 21220, 'Call is not in-progress. Cannot redirect.');
    // Twilio's rule: TwiML or a URL to fetch it from, not both; a status of completed or canceled ends the call.
    if (form.has('Twiml') && form.has('Url')) return error(400, 21218, 'Invalid application sid / url / twiml');
    reply(200, {
      sid,
      account_sid: accountSid,
      status: form.get('Status') ?? 'in-progress',
      api_version: '2010-04-01',
    });
  }
}

/** A call the stand-in answered: the TwiML it was given, and its media stream or SIP destination. */
export interface AnsweredCall {
  sid: string;
  twiml: string;
  stream: MediaStream | null;
  sip: string | null;
}

const hex32 = () => randomBytes(16).toString('hex');

/**
 * One Media Streams WebSocket as Twilio opens it for <Connect><Stream> (twilio.com/docs/voice/media-streams/
 * websocket-messages): JSON text messages, every one but `connected` numbered by sequenceNumber (a string, from 1),
 * audio as base64 mu-law at 8 kHz in 20 ms chunks. What the runtime sends back (media, mark, clear) is kept.
 */
export class MediaStream {
  readonly streamSid = `MZ${hex32()}`;
  /** The runtime's messages, parsed, in order. */
  readonly received: { event?: string; [key: string]: unknown }[] = [];
  /** Settles when the socket closed, by either side. */
  readonly closed: Promise<{ code: number; reason: string }>;
  private sequence = 0;
  private chunk = 0;

  private constructor(
    readonly socket: WebSocket,
    readonly callSid: string,
    readonly customParameters: Record<string, string>,
    readonly accountSid: string,
  ) {
    socket.on('message', (data: Buffer) => this.received.push(JSON.parse(data.toString()) as { event?: string }));
    this.closed = new Promise((resolve) =>
      socket.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
    );
  }

  /** Connects to `url` and sends `connected` and `start`. */
  static async open(
    url: string,
    callSid: string,
    customParameters: Record<string, string>,
    accountSid: string,
  ): Promise<MediaStream> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const stream = new MediaStream(socket, callSid, customParameters, accountSid);
    stream.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    stream.send({
      event: 'start',
      sequenceNumber: stream.next(),
      start: {
        accountSid,
        streamSid: stream.streamSid,
        callSid,
        tracks: ['inbound'],
        customParameters,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
      streamSid: stream.streamSid,
    });
    return stream;
  }

  /** `count` media messages of the callee's side: 20 ms of mu-law silence each. */
  media(count: number) {
    for (let i = 0; i < count; i++) {
      this.chunk++;
      this.send({
        event: 'media',
        sequenceNumber: this.next(),
        media: {
          track: 'inbound',
          chunk: String(this.chunk),
          timestamp: String((this.chunk - 1) * 20),
          payload: Buffer.alloc(160, 0xff).toString('base64'),
        },
        streamSid: this.streamSid,
      });
    }
  }

  /** The stream's end: `stop`, then the socket closed. */
  async stop() {
    if (this.socket.readyState === WebSocket.OPEN) {
      this.send({
        event: 'stop',
        sequenceNumber: this.next(),
        stop: { accountSid: this.accountSid, callSid: this.callSid },
        streamSid: this.streamSid,
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
