// One address policy when a webhook URL is saved and when an event is sent (issue 45, point 8): every address of the
// table gets the same verdict from the URL check (as callctl and the dashboard call it) and from the sender with
// private targets not allowed, making a real connection attempt (to the address itself, and to a name resolving to
// it; http and https) while a local server listens on every local address, which a refused loopback form would
// otherwise reach.
import http from 'node:http';
import { isIP, type AddressInfo, type LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSender } from '../../src/webhooks/sender.js';
import { isPrivateAddress, webhookUrlProblem } from '../../src/webhooks/url-policy.js';

const SECRET = 'whsec_' + Buffer.alloc(24, 7).toString('base64');

/** Refused: every form that leads to a loopback, private, link-local or otherwise special-purpose address. */
const REFUSED = [
  '127.0.0.1',
  '10.1.2.3',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '192.88.99.1',
  '::1',
  '::',
  '::127.0.0.1',
  '::169.254.169.254',
  '::ffff:127.0.0.1',
  '::ffff:10.0.0.1',
  '::ffff:0:127.0.0.1',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b:1::7f00:1',
  '64:ff9b:1::808:808',
  '2002:7f00:1::1',
  '2002:a9fe:a9fe::1',
  '2001:0:7f00:1::f7f7:f7f7',
  '2001:0:808:808::80ff:fffe',
  'fe80::1',
  'fd12:3456::1',
  'ff02::1',
  '100::1',
  '2001:db8::1',
  '3fff::1',
];

/** Allowed: public addresses, and the IPv6 forms that carry a public IPv4 address. */
const ALLOWED = [
  '1.1.1.1',
  '::ffff:1.1.1.1',
  '64:ff9b::1.1.1.1',
  '2002:101:101::1',
  '2001:0:101:101::fefe:fefe',
  '2606:4700:4700::1111',
];

let server: http.Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  server = http.createServer((_request, response) => response.writeHead(204).end());
  server.on('connection', () => connections++);
  // '::' takes IPv4 too (IPv4-mapped): 127.0.0.1, ::1 and ::ffff:127.0.0.1 all reach it.
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const literal = (address: string) => (isIP(address) === 6 ? `[${address}]` : address);

/** Names n0.test, n1.test, ... resolving to the table's addresses, as a DNS answer would. */
const names = new Map([...REFUSED, ...ALLOWED].map((address, i) => [`n${i}.test`, address]));
const lookup: LookupFunction = (hostname, options, callback) => {
  const address = names.get(hostname);
  if (!address) return callback(Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
  if (options.all)
    return (callback as never as (e: null, a: object[]) => void)(null, [{ address, family: isIP(address) }]);
  callback(null, address, isIP(address));
};

/** The sender's verdict on a URL: refused by the policy, or connected to (whatever answered or failed then). */
async function connectVerdict(sender: WebhookSender, url: string): Promise<'refused' | 'allowed'> {
  const attempt = await sender.send({ url, secret: SECRET }, 'msg_policy', '{}', new Date());
  return /is not allowed/.test(attempt.error ?? '') ? 'refused' : 'allowed';
}

describe('one address policy, when a URL is saved and when an event is sent', () => {
  it('the local server is reachable at its loopback forms when private targets are allowed', async () => {
    const open = new WebhookSender({ allowPrivateTargets: true, timeoutMs: 5_000 });
    try {
      for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
        expect(
          (await open.send({ url: `http://${literal(address)}:${port}/`, secret: SECRET }, 'm', '{}', new Date()))
            .status,
          address,
        ).toBe(204);
    } finally {
      open.close();
    }
  });

  it('gives every address of the table the same verdict at both times, and refused ones reach nothing', async () => {
    // A short timeout: an allowed public address may not answer here; what counts is that it was tried.
    const sender = new WebhookSender({ allowPrivateTargets: false, timeoutMs: 1_500, lookup });
    const before = connections;
    try {
      const rows = await Promise.all(
        [...names].map(async ([name, address]) => ({
          address,
          expected: REFUSED.includes(address) ? 'refused' : 'allowed',
          policy: isPrivateAddress(address) ? 'refused' : 'allowed',
          saved: webhookUrlProblem(`https://${literal(address)}/hooks`, false) === null ? 'allowed' : 'refused',
          savedByTenant:
            webhookUrlProblem(`https://${literal(address)}/hooks`, false, 'tenant') === null ? 'allowed' : 'refused',
          connected: await connectVerdict(sender, `http://${literal(address)}:${port}/hooks`),
          resolved: await connectVerdict(sender, `http://${name}:${port}/hooks`),
          // The https agent, as every real endpoint uses (the server speaks http: a TLS attempt is still a connection).
          connectedTls: await connectVerdict(sender, `https://${literal(address)}:${port}/hooks`),
          resolvedTls: await connectVerdict(sender, `https://${name}:${port}/hooks`),
        })),
      );
      const verdicts = (row: (typeof rows)[number]) => [
        row.address,
        row.policy,
        row.saved,
        row.savedByTenant,
        row.connected,
        row.resolved,
        row.connectedTls,
        row.resolvedTls,
      ];
      expect(rows.map(verdicts)).toEqual(rows.map((row) => [row.address, ...Array<string>(7).fill(row.expected)]));
    } finally {
      sender.close();
    }
    expect(connections - before).toBe(0);
  });
});
