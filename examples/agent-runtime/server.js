// A reference voice-agent runtime for outbound-call-trigger (README.md beside it, docs/agent-runtime.md): a Twilio
// Media Streams WebSocket server that reads the hand-off's parameters, fetches the call's context with its token and
// posts what happened on the call when it ends. The conversation itself is a stub to replace (converse below).
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { WebSocketServer } from 'ws';

/**
 * What GET /agent-runtime/v1/calls/{call_id} answers (docs/agent-runtime.md).
 * @typedef {{ call_id: string, agent_id: string, agent_name: string, account_id: string, from_number: string,
 *   to_number: string, attempt: number, name: string | null, email: string | null,
 *   metadata: Record<string, string | number | boolean | null>, scheduled_at: string | null,
 *   timezone: string | null }} CallContext
 */
/**
 * What POST /agent-runtime/v1/calls/{call_id}/result takes: every field optional.
 * @typedef {{ outcome?: string, summary?: string, data?: Record<string, string | number | boolean | null>,
 *   transcript?: { speaker: 'agent' | 'callee', text: string, at: string }[], transcript_url?: string,
 *   recording_url?: string, opt_out?: boolean }} CallResult
 */
/**
 * The messages Twilio sends on a media stream, as far as this runtime reads them.
 * @typedef {{ event: string, start?: { streamSid: string, callSid: string, customParameters?: Record<string, string> },
 *   media?: { track?: string, payload: string } }} TwilioMessage
 */
/** @typedef {{ audio(payload: string): void, end(): CallResult }} Conversation */
/** @typedef {ReturnType<typeof serviceClient>} Service */
/** @typedef {{ callId: string, token: string, conversation: Conversation }} LiveCall */

/** An error of the service's, with its HTTP status. */
class ServiceError extends Error {
  /**
   * @param {string} message
   * @param {number} status
   */
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/** 20 ms of mu-law silence: what a real bot would replace with its speech. */
const SILENCE = Buffer.alloc(160, 0xff).toString('base64');

/**
 * The conversation: replace this with your speech-to-text, language model and text-to-speech. `say` sends audio
 * (base64 mu-law, 8 kHz) to the callee. Called with the call's context once it is known, with each audio frame of the
 * callee, and at the end, when it answers the result posted back to the service.
 *
 * @param {CallContext} context
 * @param {(payload: string) => void} say
 * @returns {Conversation}
 */
export function converse(context, say) {
  /** @type {NonNullable<CallResult['transcript']>} */
  const transcript = [];
  let frames = 0;
  const greeting = `Hello ${context.name ?? 'there'}, this is ${context.agent_name}.`;
  transcript.push({ speaker: 'agent', text: greeting, at: new Date().toISOString() });
  say(SILENCE);
  return {
    // The callee's audio, base64 mu-law: feed it to your speech-to-text.
    audio() {
      frames++;
    },
    /** The result (every field optional): outcome, summary, data, transcript, transcript_url, recording_url, opt_out. */
    end() {
      return {
        outcome: frames > 0 ? 'conversation_held' : 'no_speech',
        summary: `Greeted ${context.name ?? 'the callee'} and listened to ${frames * 20} ms of audio.`,
        data: { audio_frames: frames },
        transcript,
      };
    },
  };
}

/**
 * The service's two routes for runtimes, authenticated by the call's context token.
 *
 * @param {string} serviceUrl  outbound-call-trigger's public address, e.g. https://calls.example.com
 */
export function serviceClient(serviceUrl) {
  const base = serviceUrl.replace(/\/+$/, '');
  /**
   * @param {'GET' | 'POST'} method
   * @param {string} callId
   * @param {string} path
   * @param {string} token
   * @param {CallResult} [body]
   * @returns {Promise<unknown>}
   */
  async function request(method, callId, path, token, body) {
    const response = await fetch(`${base}/agent-runtime/v1/calls/${encodeURIComponent(callId)}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    if (!response.ok)
      throw new ServiceError(`${method} ${path || '/'}: HTTP ${response.status} ${text}`, response.status);
    return parseJson(text);
  }
  return {
    /**
     * The call's numbers, name, email, metadata (as the CRM gave it), agent, account, attempt, schedule.
     * @param {string} callId
     * @param {string} token
     */
    context: async (callId, token) => /** @type {CallContext} */ (await request('GET', callId, '', token)),
    /**
     * Posts the result; tried again on a network error or a 5xx (the same body again is idempotent). A 4xx is not
     * tried again: 401 the token is no good (another call, or long over), 409 a different result was delivered.
     * @param {string} callId
     * @param {string} token
     * @param {CallResult} result
     */
    async result(callId, token, result) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await request('POST', callId, '/result', token, result);
        } catch (error) {
          if ((error instanceof ServiceError && error.status < 500) || attempt >= 4) throw error;
          await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
        }
      }
    },
  };
}

/**
 * @param {string} text
 * @returns {unknown}
 */
function parseJson(text) {
  return JSON.parse(text);
}

/**
 * @param {string} msg
 * @param {Record<string, unknown>} [fields]
 */
function log(msg, fields = {}) {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), msg, ...fields })}\n`);
}

/**
 * One Twilio media stream: `connected`, then `start` (the hand-off's parameters in start.customParameters), `media`
 * frames, and `stop` when the call ends (or the socket closes).
 * @param {import('ws').WebSocket} socket
 * @param {Service} service
 */
function serve(socket, service) {
  /** @type {Promise<LiveCall | null> | null} */
  let call = null;
  let ended = false;
  socket.on('message', (/** @type {Buffer} */ data) => {
    /** @type {TwilioMessage} */
    let message;
    try {
      message = /** @type {TwilioMessage} */ (parseJson(data.toString()));
    } catch {
      return;
    }
    const media = message.media;
    if (message.event === 'start' && message.start) call = start(message.start);
    else if (message.event === 'media' && media && media.track !== 'outbound')
      void call?.then((c) => c?.conversation.audio(media.payload));
    else if (message.event === 'stop') void end();
  });
  socket.on('close', () => void end());

  /**
   * @param {NonNullable<TwilioMessage['start']>} start
   * @returns {Promise<LiveCall | null>}
   */
  async function start(start) {
    const parameters = start.customParameters ?? {};
    const { call_id: callId, context_token: token } = parameters;
    if (!callId || !token) {
      log('no hand-off parameters: not a call of outbound-call-trigger', { streamSid: start.streamSid });
      socket.close(1008, 'missing call_id or context_token');
      return null;
    }
    try {
      const context = await service.context(callId, token);
      log('context', { callId, attempt: context.attempt, agent: context.agent_id, direction: parameters.direction });
      const say = (/** @type {string} */ payload) => {
        if (socket.readyState !== socket.OPEN) return;
        socket.send(JSON.stringify({ event: 'media', streamSid: start.streamSid, media: { payload } }));
        socket.send(JSON.stringify({ event: 'mark', streamSid: start.streamSid, mark: { name: 'greeting' } }));
      };
      return { callId, token, conversation: converse(context, say) };
    } catch (error) {
      log('could not read the call context', { callId, error: String(error) });
      socket.close(1011, 'context unavailable');
      return null;
    }
  }

  async function end() {
    if (ended || call === null) return;
    ended = true;
    const c = await call;
    if (c === null) return;
    try {
      await service.result(c.callId, c.token, c.conversation.end());
      log('result delivered', { callId: c.callId });
    } catch (error) {
      log('could not deliver the result', { callId: c.callId, error: String(error) });
    }
    if (socket.readyState === socket.OPEN) socket.close(1000);
  }
}

/**
 * Starts the runtime: a WebSocket server (any path) for Twilio's media streams.
 *
 * @param {{ serviceUrl: string, port?: number, host?: string }} options
 */
export async function startRuntime({ serviceUrl, port = 8765, host = '0.0.0.0' }) {
  const service = serviceClient(serviceUrl);
  const server = http.createServer((_request, response) => response.writeHead(426).end('WebSocket only\n'));
  const sockets = new WebSocketServer({ server });
  sockets.on('connection', (socket) => serve(socket, service));
  await new Promise((resolve) => server.listen(port, host, () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `ws://${address.address}:${address.port}`,
    close: () =>
      /** @type {Promise<void>} */ (
        new Promise((resolve) => {
          for (const socket of sockets.clients) socket.terminate();
          sockets.close();
          server.close(() => resolve());
        })
      ),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const serviceUrl = process.env.SERVICE_URL;
  if (!serviceUrl) {
    log('SERVICE_URL is required: the address of outbound-call-trigger, e.g. https://calls.example.com');
    process.exit(1);
  }
  const runtime = await startRuntime({
    serviceUrl,
    port: Number(process.env.PORT ?? 8765),
    host: process.env.HOST ?? '0.0.0.0',
  });
  log('listening', { url: runtime.url });
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => void runtime.close().then(() => process.exit(0)));
}
