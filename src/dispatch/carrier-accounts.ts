// Credentials checked when saved: one harmless authenticated read of the carrier's account (Twilio's and SignalWire's
// Account resource, Telnyx's Call Control application), then the numbers the account owns where the carrier lists
// them, so that an agent's caller ID can be checked against them. Nothing is changed at the carrier.
import type { CarrierCredentials } from '../../schemas/carrier.js';
import { trimSlash } from './twilio-dialer.js';

/** Where each carrier's REST API is: the real ones in production, local stand-ins in tests. */
export interface CarrierApiAddresses {
  twilioApiBaseUrl: string;
  telnyxApiBaseUrl: string;
  /** SignalWire's API is the space's own address; a test names its stand-in here instead. */
  signalwireApiBaseUrl?: string | undefined;
}

export type CarrierAccountCheck =
  { ok: true; numbers: string[] | null } | { ok: false; reason: string; status: number | null };

/** Numbers read at most (pages of the carrier's list): more than this many is an account we do not check against. */
const MAX_NUMBERS = 5_000;
const TIMEOUT_MS = 10_000;

export class CarrierUnreachable extends Error {
  override name = 'CarrierUnreachable';
}

/** One authenticated GET; the JSON body, or the status the carrier refused with. */
async function getJson(
  url: string,
  authorization: string,
  secrets: readonly string[],
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization, accept: 'application/json' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (error) {
    const reason =
      (error as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS} ms` : (error as Error).message;
    throw new CarrierUnreachable(redact(reason, secrets), { cause: error });
  }
  const text = await response.text().catch(() => '');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the status alone has to do.
  }
  return { status: response.status, body };
}

function redact(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => (secret ? out.split(secret).join('[REDACTED]') : out), text);
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Twilio's and SignalWire's LaML: the Account resource, then IncomingPhoneNumbers page by page. */
async function checkLaml(apiBase: string, accountSid: string, token: string): Promise<CarrierAccountCheck> {
  const authorization = basic(accountSid, token);
  const account = `${apiBase}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}`;
  const read = await getJson(`${account}.json`, authorization, [token]);
  if (read.status !== 200) return { ok: false, reason: refusal(read), status: read.status };
  const numbers: string[] = [];
  let next: string | null = `${account}/IncomingPhoneNumbers.json?PageSize=1000`;
  while (next !== null && numbers.length < MAX_NUMBERS) {
    const page = await getJson(next, authorization, [token]);
    if (page.status !== 200) return { ok: true, numbers: null };
    const body = page.body as { incoming_phone_numbers?: { phone_number?: unknown }[]; next_page_uri?: unknown };
    for (const entry of body.incoming_phone_numbers ?? [])
      if (typeof entry.phone_number === 'string') numbers.push(entry.phone_number);
    // next_page_uri is a path on the same API (it starts with /2010-04-01/...).
    next =
      typeof body.next_page_uri === 'string' && body.next_page_uri.startsWith('/2010-04-01/')
        ? `${apiBase}${body.next_page_uri}`
        : null;
  }
  return { ok: true, numbers: numbers.length >= MAX_NUMBERS ? null : numbers };
}

/** Telnyx: the Call Control application calls are placed on, then the numbers assigned to it. */
async function checkTelnyx(
  apiBase: string,
  credentials: Extract<CarrierCredentials, { provider: 'telnyx' }>['credentials'],
): Promise<CarrierAccountCheck> {
  const authorization = `Bearer ${credentials.api_key}`;
  const secrets = [credentials.api_key];
  const application = await getJson(
    `${apiBase}/v2/call_control_applications/${encodeURIComponent(credentials.connection_id)}`,
    authorization,
    secrets,
  );
  if (application.status !== 200) return { ok: false, reason: refusal(application), status: application.status };
  const numbers: string[] = [];
  for (let page = 1; numbers.length < MAX_NUMBERS; page++) {
    const query = `filter[connection_id]=${encodeURIComponent(credentials.connection_id)}&page[number]=${page}&page[size]=250`;
    const read = await getJson(`${apiBase}/v2/phone_numbers?${query}`, authorization, secrets);
    if (read.status !== 200) return { ok: true, numbers: null };
    const body = read.body as { data?: { phone_number?: unknown }[]; meta?: { total_pages?: unknown } };
    for (const entry of body.data ?? []) if (typeof entry.phone_number === 'string') numbers.push(entry.phone_number);
    const pages = typeof body.meta?.total_pages === 'number' ? body.meta.total_pages : 1;
    if (page >= pages || (body.data ?? []).length === 0) break;
  }
  return { ok: true, numbers: numbers.length >= MAX_NUMBERS ? null : numbers };
}

/** What the carrier said, in words for the person who typed the credentials (never the credentials themselves). */
function refusal({ status }: { status: number }): string {
  if (status === 401 || status === 403) return `it refused these credentials (HTTP ${status})`;
  if (status === 404) return 'it knows no such account (HTTP 404)';
  return `it answered HTTP ${status}`;
}

/** Checks `carrier`'s credentials against its API; throws CarrierUnreachable when the carrier could not be asked. */
export async function checkCarrierAccount(
  carrier: CarrierCredentials,
  addresses: CarrierApiAddresses,
): Promise<CarrierAccountCheck> {
  switch (carrier.provider) {
    case 'twilio':
      return checkLaml(
        trimSlash(addresses.twilioApiBaseUrl),
        carrier.credentials.account_sid,
        carrier.credentials.auth_token,
      );
    case 'signalwire':
      return checkLaml(
        `${trimSlash(addresses.signalwireApiBaseUrl ?? carrier.credentials.space_url)}/api/laml`,
        carrier.credentials.project_id,
        carrier.credentials.token,
      );
    case 'telnyx':
      return checkTelnyx(trimSlash(addresses.telnyxApiBaseUrl), carrier.credentials);
  }
}
