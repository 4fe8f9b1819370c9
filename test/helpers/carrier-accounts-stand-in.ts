// A local stand-in of the carriers' account reads that saving credentials makes (src/dispatch/carrier-accounts.ts):
// Twilio's and SignalWire's Account resource and IncomingPhoneNumbers, Telnyx's Call Control application and phone
// numbers. It knows one account of each, lists their numbers (or refuses to list them when told), and answers a
// status of the test's choosing when told. Stopped when the file ends (file-end.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { atFileEnd } from './file-end.js';

export const CARRIER_SID = 'AC0123456789abcdef0123456789abcdef';
export const CARRIER_TOKEN = 'f00dfacef00dfacef00dfacef00dface';
export const CARRIER_TELNYX_KEY = 'KEY0123456789ABCDEF_secretpartofthekey';
export const CARRIER_TELNYX_PUBLIC = Buffer.alloc(32, 7).toString('base64');
export const CARRIER_TELNYX_CONNECTION = '1234567890';
export const CARRIER_PROJECT = '3f6f3e3a-2b1c-4d5e-8f90-a1b2c3d4e5f6';
export const CARRIER_SW_TOKEN = 'PT0123456789abcdef0123456789abcdef0123456789ab';
/** The numbers each known account owns. */
export const TWILIO_NUMBERS = ['+14155550100', '+14155550101'];
export const TELNYX_NUMBERS = ['+12025550101'];

const running: CarrierAccountsStandIn[] = [];
atFileEnd(async () => {
  for (const standIn of running.splice(0)) await standIn.stop();
});

const answer = (response: ServerResponse, status: number, body: unknown) =>
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

export class CarrierAccountsStandIn {
  /** Requests received, as `METHOD /path?query`. */
  readonly requests: string[] = [];
  /** Every request is answered with this status when set. */
  status: number | null = null;
  /** The number lists answer 403 (the carrier does not list numbers) when set. */
  hideNumbers = false;
  url = '';
  private readonly server = createServer((request, response) => this.handle(request, response));

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    running.push(this);
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The environment that sends callctl's and the dashboard's checks here (and lets a carrier be set). */
  env(): Record<string, string> {
    return {
      TWILIO_API_BASE_URL: this.url,
      TELNYX_API_BASE_URL: this.url,
      SIGNALWIRE_API_BASE_URL: this.url,
      PUBLIC_BASE_URL: 'https://calls.example.test',
    };
  }

  private handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    this.requests.push(`${request.method} ${url.pathname}${url.search}`);
    if (this.status !== null) return answer(response, this.status, { message: 'as told' });
    const auth = request.headers.authorization ?? '';
    const basic = (user: string, password: string) =>
      auth === `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    for (const [base, ok] of [
      [`/2010-04-01/Accounts/${CARRIER_SID}`, basic(CARRIER_SID, CARRIER_TOKEN)],
      [`/api/laml/2010-04-01/Accounts/${CARRIER_PROJECT}`, basic(CARRIER_PROJECT, CARRIER_SW_TOKEN)],
    ] as const) {
      if (!url.pathname.startsWith(base)) continue;
      if (!ok) return answer(response, 401, { code: 20003, message: 'Authenticate' });
      if (url.pathname === `${base}.json`) return answer(response, 200, { sid: CARRIER_SID, status: 'active' });
      if (url.pathname === `${base}/IncomingPhoneNumbers.json`) {
        if (this.hideNumbers) return answer(response, 403, { message: 'not allowed' });
        return answer(response, 200, {
          incoming_phone_numbers: TWILIO_NUMBERS.map((phone_number) => ({ phone_number })),
          next_page_uri: null,
        });
      }
    }
    if (url.pathname.startsWith('/v2/')) {
      if (auth !== `Bearer ${CARRIER_TELNYX_KEY}`)
        return answer(response, 401, { errors: [{ title: 'Authentication failed' }] });
      if (url.pathname === `/v2/call_control_applications/${CARRIER_TELNYX_CONNECTION}`)
        return answer(response, 200, { data: { id: CARRIER_TELNYX_CONNECTION } });
      if (url.pathname === '/v2/phone_numbers') {
        if (this.hideNumbers) return answer(response, 403, { errors: [{ title: 'not allowed' }] });
        return answer(response, 200, {
          data: TELNYX_NUMBERS.map((phone_number) => ({ phone_number })),
          meta: { total_pages: 1, page_number: 1 },
        });
      }
    }
    answer(response, 404, { message: 'not found' });
  }
}
