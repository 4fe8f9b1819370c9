// The carriers of the matrix test (test/dispatch/carrier-matrix.test.ts), each behind one interface: the environment
// of an app that dials through it (DIALER), and the steps of a call's life as the carrier's side takes them. Twilio,
// SignalWire and Telnyx are their local stand-ins, whose callbacks are signed as the carrier signs them (Twilio's SDK
// for X-Twilio-Signature, the signing key for X-SignalWire-Signature, ed25519 for Telnyx); the simulated dialer has
// no stand-in: its scripted numbers play the callee, and its dial log (SIMULATED_DIAL_LOG) shows what it dialled.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { WebSocketServer } from 'ws';
import { SIMULATED_BUSY_THEN_ANSWERS, SIMULATED_VOICEMAIL } from '../../src/dispatch/simulated-dialer.js';
import { decodeClientState } from '../../src/dispatch/telnyx-dialer.js';
import { atFileEnd } from './file-end.js';
import { SignalWireStandIn, signalWireEnv } from './signalwire-stand-in.js';
import { TelnyxStandIn, telnyxEnv } from './telnyx-stand-in.js';
import { PUBLIC, STREAM, type TwilioCompatibleStandIn } from './twilio-compatible-stand-in.js';
import { TwilioStandIn, twilioEnv } from './twilio.js';
import { waitFor } from './wait.js';

export interface MatrixCarrier {
  name: 'simulated' | 'twilio' | 'signalwire' | 'telnyx';
  /** Starts the carrier's side; resolves with the environment of an app that dials through it. */
  start(): Promise<Record<string, string>>;
  /** Where the carrier's callbacks go: the app, listening at `serviceUrl`. */
  reach(serviceUrl: string): void;
  /** The callee's numbers for each course of a call (the simulated dialer's are scripted; a stand-in's any). */
  numbers: { answers: string; busyThenAnswers: string; voicemail: string };
  /** Whether the carrier's side hears what the service plays to a machine (a stand-in does; the simulated dialer, no). */
  hearsMessages: boolean;
  /** Whether an answered call is handed to a runtime with a context token (the simulated dialer's goes to none). */
  handsOff: boolean;
  /** Resolves once the carrier was asked to dial attempt `attempt` of the call. */
  dialled(callId: string, attempt: number): Promise<void>;
  /** How many dials of the call the carrier got, every attempt. */
  dials(callId: string): number;
  /** The callee of the call's latest attempt picks up; resolves with the context token handed to the runtime. */
  answer(callId: string): Promise<string | null>;
  /** The callee hangs up. */
  hangUp(callId: string): Promise<void>;
  /** The latest attempt rings, and the line is busy. */
  busy(callId: string): Promise<void>;
  /** A machine answered (after answer()) and its greeting ended: resolves with the text played to it, if heard. */
  machine(callId: string): Promise<string | null>;
}

const stops: (() => Promise<void>)[] = [];
atFileEnd(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** The simulated dialer: its scripted test numbers, and the dial log it writes one line per attempt to. */
function simulated(): MatrixCarrier {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-matrix-')), 'dials.log');
  const lines = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
  return {
    name: 'simulated',
    start: () =>
      Promise.resolve({
        DIALER: 'simulated',
        SIMULATED_RING_MS: '20',
        SIMULATED_TALK_MS: '100',
        SIMULATED_DIAL_LOG: log,
        DISPATCH_ENABLED: 'true',
      }),
    reach: () => undefined,
    numbers: { answers: '+14155552671', busyThenAnswers: SIMULATED_BUSY_THEN_ANSWERS, voicemail: SIMULATED_VOICEMAIL },
    hearsMessages: false,
    handsOff: false,
    async dialled(callId, attempt) {
      const line = attempt === 1 ? callId : `${callId}/${attempt}`;
      await waitFor(lines, (all) => all.includes(line));
    },
    dials: (callId) => lines().filter((l) => l.split('/')[0] === callId).length,
    // The script plays the callee: it answers, is busy or is a machine by its number, and hangs up on the clock.
    answer: () => Promise.resolve(null),
    hangUp: () => Promise.resolve(),
    busy: () => Promise.resolve(),
    machine: () => Promise.resolve(null),
  };
}

/** Twilio or SignalWire: one stand-in of a Twilio-like carrier, and a runtime its media streams reach. */
function twilioLike(
  name: 'twilio' | 'signalwire',
  standIn: TwilioCompatibleStandIn,
  env: (apiBaseUrl: string) => Record<string, string>,
): MatrixCarrier {
  const createsOf = (callId: string) =>
    standIn.creates.filter((c) => new URL(c.form.get('Url')!).searchParams.get('call_id') === callId);
  const attemptOf = (c: { form: URLSearchParams }) =>
    Number(new URL(c.form.get('Url')!).searchParams.get('attempt') ?? '1');
  const latest = (callId: string) => {
    const create = createsOf(callId).at(-1);
    if (!create) throw new Error(`${name} was never asked to dial ${callId}`);
    return create.sid;
  };
  return {
    name,
    async start() {
      const runtime = await new Promise<WebSocketServer>((resolve) => {
        const server: WebSocketServer = new WebSocketServer({ host: '127.0.0.1', port: 0 }, () => resolve(server));
      });
      stops.push(async () => {
        for (const socket of runtime.clients) socket.terminate();
        await new Promise((resolve) => runtime.close(resolve));
      });
      standIn.reach(STREAM, `ws://127.0.0.1:${(runtime.address() as AddressInfo).port}/stream`);
      return env(await standIn.start());
    },
    reach: (serviceUrl) => standIn.reach(PUBLIC, serviceUrl),
    numbers: { answers: '+14155552671', busyThenAnswers: '+14155552672', voicemail: '+14155552673' },
    hearsMessages: true,
    handsOff: true,
    async dialled(callId, attempt) {
      await waitFor(() => createsOf(callId).some((c) => attemptOf(c) === attempt), Boolean);
    },
    dials: (callId) => createsOf(callId).length,
    async answer(callId) {
      const answered = await standIn.answer(latest(callId));
      return answered.stream?.customParameters.context_token ?? null;
    },
    hangUp: (callId) => standIn.hangUp(latest(callId)),
    busy: (callId) => standIn.busy(latest(callId)),
    async machine(callId) {
      const sid = latest(callId);
      await standIn.machine(sid);
      // What the carrier was told to play: the live call's TwiML, its <Say> read as an XML parser reads it.
      const twiml = standIn.updates.findLast((u) => u.sid === sid)?.form.get('Twiml');
      if (!twiml) return null;
      return (
        new DOMParser().parseFromString(twiml, 'text/xml').getElementsByTagName('Say').item(0)?.textContent ?? null
      );
    },
  };
}

/** Telnyx: the stand-in of Call Control v2, with the runtime of its own that AGENT_STREAM_URL leads to. */
function telnyx(): MatrixCarrier {
  const standIn = new TelnyxStandIn();
  const latest = (callId: string) => {
    const dial = standIn.dialFor(callId);
    if (!dial) throw new Error(`Telnyx was never asked to dial ${callId}`);
    return dial.id;
  };
  return {
    name: 'telnyx',
    start: async () => telnyxEnv(await standIn.start(), standIn.keys.publicKey),
    reach: (serviceUrl) => standIn.reach(PUBLIC, serviceUrl),
    numbers: { answers: '+14155552671', busyThenAnswers: '+14155552672', voicemail: '+14155552673' },
    hearsMessages: true,
    handsOff: true,
    async dialled(callId, attempt) {
      await waitFor(() => standIn.dialFor(callId, attempt), Boolean);
    },
    dials: (callId) => standIn.dials.filter((d) => decodeClientState(d.body.client_state)?.callId === callId).length,
    async answer(callId) {
      const { stream } = await standIn.answer(latest(callId));
      return stream?.customParameters.context_token ?? null;
    },
    hangUp: (callId) => standIn.hangUp(latest(callId)),
    async busy(callId) {
      const id = latest(callId);
      await standIn.initiated(id);
      await standIn.hangUp(id, 'user_busy');
    },
    async machine(callId) {
      const id = latest(callId);
      await standIn.machine(id, 'machine');
      await standIn.greetingEnded(id, 'beep_detected');
      const speak = standIn.commandsOf(id).find((c) => c.action === 'speak');
      return speak ? String(speak.body.payload) : null;
    },
  };
}

/** The four carriers, each made fresh (a file builds one app per carrier). */
export function matrixCarriers(): MatrixCarrier[] {
  return [
    simulated(),
    twilioLike('twilio', new TwilioStandIn(), twilioEnv),
    twilioLike('signalwire', new SignalWireStandIn(), signalWireEnv),
    telnyx(),
  ];
}
