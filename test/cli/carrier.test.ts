// `callctl carrier show|set|remove|clients-choose` (PRODUCT.md, "Placing calls"): set checks the credentials at a
// local stand-in of the carrier, takes a secret given as `-` from stdin, stores it sealed and audits it as the
// operator's, and never prints it; refusals (the carrier's 401, a bad field, an unknown carrier, no PUBLIC_BASE_URL, a
// `-` without a line on stdin) store nothing; show names whose carrier is in use (the account's, its agency's, the
// service's default from DIALER) with its numbers; a client's own is used only while its agency lets clients choose.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { runCli } from '../../src/cli/main.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import {
  CARRIER_SID,
  CARRIER_TELNYX_CONNECTION,
  CARRIER_TELNYX_KEY,
  CARRIER_TELNYX_PUBLIC,
  CARRIER_TOKEN,
  CarrierAccountsStandIn,
  TELNYX_NUMBERS,
  TWILIO_NUMBERS,
} from '../helpers/carrier-accounts-stand-in.js';
import { callctl } from '../helpers/cli.js';
import { testSecretsKey } from '../helpers/database.js';
import { createClientTenant, createTenant } from '../helpers/fixtures.js';
import { json } from '../helpers/json.js';

let app: App;
let databaseUrl: string;
const standIn = new CarrierAccountsStandIn();

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
  await standIn.start();
});

/** callctl with the stand-in's environment and `stdin` piped in. */
async function cli(args: string[], { stdin = '', env = {} }: { stdin?: string; env?: Record<string, string> } = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env: { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', SECRETS_KEY: testSecretsKey(), ...standIn.env(), ...env },
    now: app.now,
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    stdin: () => Promise.resolve(stdin),
  });
  return { code, stdout, stderr, json: () => json<{ carrier: Record<string, unknown> }>(stdout) };
}

const rowOf = (accountId: string) => prismaOf(app).accountCarrier.findUnique({ where: { accountId } });
const twilioArgs = (accountId: string, token = '-') => [
  ...['carrier', 'set', accountId, '--provider', 'twilio'],
  ...['--account-sid', CARRIER_SID, '--auth-token', token],
];

describe('callctl carrier', () => {
  it('set takes the token from stdin, checks it at the carrier, stores it sealed and never prints it', async () => {
    const agency = await createTenant(app.storage);
    const set = await cli([...twilioArgs(agency.accountId), '--json'], { stdin: `${CARRIER_TOKEN}\n` });
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(set.json().carrier).toMatchObject({
      account_id: agency.accountId,
      provider: 'twilio',
      source: 'account',
      shown: { account_sid: CARRIER_SID },
      numbers: TWILIO_NUMBERS,
    });
    expect(set.stdout + set.stderr).not.toContain(CARRIER_TOKEN);
    expect(standIn.requests).toContain(`GET /2010-04-01/Accounts/${CARRIER_SID}.json`);
    const row = await rowOf(agency.accountId);
    expect(row!.credentials).toMatch(/^sealed\./);
    expect(JSON.stringify(row)).not.toContain(CARRIER_TOKEN);
    const audit = await prismaOf(app).auditEntry.findMany({
      where: { accountId: agency.accountId, action: 'carrier_set' },
      select: { actorKind: true, detail: true },
    });
    expect(audit).toEqual([
      { actorKind: 'operator', detail: { before: null, after: { provider: 'twilio', account_sid: CARRIER_SID } } },
    ]);

    const shown = await cli(['carrier', 'show', agency.accountId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/provider: +twilio/);
    expect(shown.stdout).toMatch(/source: +account/);
    expect(shown.stdout).toContain(TWILIO_NUMBERS.join(', '));
    expect(shown.stdout).not.toContain(CARRIER_TOKEN);
  });

  it('set takes a secret on the command line too, and Telnyx with its own flags', async () => {
    const agency = await createTenant(app.storage);
    const set = await cli([
      ...['carrier', 'set', agency.accountId, '--provider', 'telnyx', '--api-key', CARRIER_TELNYX_KEY],
      ...['--connection-id', CARRIER_TELNYX_CONNECTION, '--public-key', CARRIER_TELNYX_PUBLIC],
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/provider: +telnyx/);
    expect(set.stdout).toContain(TELNYX_NUMBERS[0]);
    expect(set.stdout).toContain('never shown again');
    expect(set.stdout).not.toContain(CARRIER_TELNYX_KEY);
    expect(JSON.stringify(await rowOf(agency.accountId))).not.toContain(CARRIER_TELNYX_KEY);
  });

  it('says when the carrier does not list numbers', async () => {
    const agency = await createTenant(app.storage);
    standIn.hideNumbers = true;
    try {
      const set = await cli(twilioArgs(agency.accountId, CARRIER_TOKEN));
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toContain('The carrier does not list numbers');
    } finally {
      standIn.hideNumbers = false;
    }
    expect((await rowOf(agency.accountId))?.numbers ?? null).toBeNull();
  });

  it('refuses what the carrier refuses, a bad field, an unknown carrier, a missing stdin line, no PUBLIC_BASE_URL', async () => {
    const agency = await createTenant(app.storage);
    const id = agency.accountId;
    const wrong = await cli([...twilioArgs(id), '--json'], { stdin: `${'a'.repeat(32)}\n` });
    expect(wrong.code).toBe(1);
    expect(json<{ error: string }>(wrong.stderr).error).toBe(
      'Twilio did not accept these credentials: it refused these credentials (HTTP 401)',
    );
    const badField = await cli([
      'carrier',
      'set',
      id,
      '--provider',
      'twilio',
      '--account-sid',
      'AC12',
      '--auth-token',
      CARRIER_TOKEN,
    ]);
    expect(badField.code).toBe(1);
    expect(badField.stderr).toMatch(/account_sid is not valid: expected Account SID/);
    expect(badField.stderr).not.toContain(CARRIER_TOKEN);
    const unknown = await cli(['carrier', 'set', id, '--provider', 'vonage', '--json']);
    expect(unknown.code).toBe(2);
    expect(json<{ error: string }>(unknown.stderr).error).toBe(
      'Unknown carrier "vonage": expected twilio, telnyx, signalwire',
    );
    const noLine = await cli([...twilioArgs(id), '--json'], { stdin: '' });
    expect(noLine.code).toBe(2);
    expect(json<{ error: string }>(noLine.stderr).error).toMatch(/^--auth-token -: stdin has no line for it/);
    const noPublic = await cli([...twilioArgs(id), '--json'], { stdin: CARRIER_TOKEN, env: { PUBLIC_BASE_URL: '' } });
    expect(noPublic.code).toBe(1);
    expect(json<{ error: string }>(noPublic.stderr).error).toMatch(/^PUBLIC_BASE_URL is not set: a carrier could not/);
    const other = await cli([...twilioArgs(id, CARRIER_TOKEN), '--api-key', CARRIER_TELNYX_KEY, '--json']);
    expect(other.code).toBe(1);
    expect(json<{ error: string }>(other.stderr).error).toBe('Twilio takes no api_key');
    expect(await rowOf(id)).toBeNull();
    expect(await prismaOf(app).auditEntry.count({ where: { accountId: id, action: 'carrier_set' } })).toBe(0);
  });

  it("show: the service's default from DIALER without its secret; a client's own only while the agency allows", async () => {
    const agency = await createTenant(app.storage);
    const client = await createClientTenant(app.storage, agency.accountId);
    const environment = {
      DIALER: 'twilio',
      TWILIO_ACCOUNT_SID: `AC${'9'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: 'environment-token-never-shown',
      AGENT_STREAM_URL: 'wss://agent.example.test/stream',
    };
    const byDefault = await cli(['carrier', 'show', client.accountId, '--json'], { env: environment });
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(byDefault.json().carrier).toMatchObject({
      provider: 'twilio',
      source: 'environment',
      shown: { account_sid: `AC${'9'.repeat(32)}` },
      numbers: null,
    });
    expect(byDefault.stdout).not.toContain('environment-token-never-shown');

    expect((await cli(twilioArgs(agency.accountId), { stdin: CARRIER_TOKEN })).code).toBe(0);
    expect((await cli(['carrier', 'show', client.accountId, '--json'])).json().carrier).toMatchObject({
      provider: 'twilio',
      source: 'agency',
    });
    // Set for the client while the agency does not let clients choose: stored, not in use, and said so.
    const telnyxArgs = [
      ...['carrier', 'set', client.accountId, '--provider', 'telnyx', '--api-key', '-'],
      ...['--connection-id', CARRIER_TELNYX_CONNECTION, '--public-key', CARRIER_TELNYX_PUBLIC],
    ];
    const unused = await cli(telnyxArgs, { stdin: CARRIER_TELNYX_KEY });
    expect(unused.code, unused.stderr).toBe(0);
    expect(unused.stdout).toContain('Not in use yet: the agency does not let its clients choose their carrier');

    const on = await cli(['carrier', 'clients-choose', agency.accountId, 'on', '--json']);
    expect(on.code).toBe(0);
    expect(json(on.stdout)).toEqual({ agency_id: agency.accountId, clients_choose_carrier: true });
    expect((await cli(['carrier', 'show', client.accountId, '--json'])).json().carrier).toMatchObject({
      provider: 'telnyx',
      source: 'account',
      clients_choose_carrier: true,
    });

    const removed = await cli(['carrier', 'remove', client.accountId, '--json']);
    expect(removed.code).toBe(0);
    expect(json<{ removed: boolean; carrier: { source: string } }>(removed.stdout)).toMatchObject({
      removed: true,
      carrier: { provider: 'twilio', source: 'agency' },
    });
    const again = await cli(['carrier', 'remove', client.accountId]);
    expect(again.stdout).toContain('It had no carrier of its own: nothing changed.');
    expect(await rowOf(client.accountId)).toBeNull();

    const onClient = await cli(['carrier', 'clients-choose', client.accountId, 'on', '--json']);
    expect(onClient.code).toBe(1);
    expect(json<{ error: string }>(onClient.stderr).error).toBe('Only an agency lets its clients choose their carrier');
    const maybe = await cli(['carrier', 'clients-choose', agency.accountId, 'maybe']);
    expect(maybe.code).toBe(2);
  });

  it('help lists the carrier commands and their flags', async () => {
    const help = await callctl(databaseUrl, ['carrier', '--help']);
    expect(help.code).toBe(0);
    for (const text of [
      'callctl carrier show <account-id>',
      'callctl carrier set <account-id> --provider twilio|telnyx|signalwire',
      'callctl carrier remove <account-id>',
      'callctl carrier clients-choose <agency-id> on|off',
      '--auth-token <token>|-',
      '--signing-key <key>|-',
    ])
      expect(help.stdout).toContain(text);
  });
});
