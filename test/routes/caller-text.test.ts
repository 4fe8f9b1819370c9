// The trigger's name and email (issue 21, point 7): a control character is refused with a 400 naming the field and
// nothing is stored (it used to be dropped from the TwiML while the webhook kept it); tab, CR and LF stay exact in the
// call, the webhook payload and the TwiML; an email is one real address rule, the same for the server and the schema.
import { DOMParser } from '@xmldom/xmldom';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { handOffPairs } from '../../src/dispatch/hand-off.js';
import { streamTwiml } from '../../src/routes/telephony/twilio.js';
import { EMAIL_PATTERN } from '../../schemas/text.js';
import type { Tenant } from '../helpers/fixtures.js';
import { json, type ErrorResponse, type WebhookEvent } from '../helpers/json.js';
import type { Receiver } from '../helpers/receiver.js';
import { buildWebhookApp } from '../helpers/webhook-app.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { prismaOf } from '../helpers/app.js';

let app: App;
let tenant: Tenant;
let receiver: Receiver;

beforeAll(async () => {
  ({ app, tenant, receiver } = await buildWebhookApp(20, { RATE_LIMIT_PER_MINUTE: '1000' }));
});

const PHONE = '+14155552671';
const NAME_RULE =
  'name must not contain control characters other than tab, line feed and carriage return, nor unpaired surrogates';
const callCount = () => prismaOf(app).call.count();

/** Every C0 control but tab, LF and CR, DEL and every C1 control. */
const FORBIDDEN = [
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).filter((c) => !'\t\n\r'.includes(c)),
  '\u007f',
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)),
];

describe('name', () => {
  it('refuses every C0 (but tab, LF, CR), DEL and C1 control character with a 400 naming the field, storing nothing', async () => {
    const before = await callCount();
    for (const c of FORBIDDEN) {
      const res = await trigger(app, tenant.key, { phone_number: PHONE, name: `Ada${c}Lovelace` });
      expect({ c: c.charCodeAt(0), status: res.statusCode, body: res.json<unknown>() }).toEqual({
        c: c.charCodeAt(0),
        status: 400,
        body: { success: false, error: NAME_RULE },
      });
    }
    expect(await callCount()).toBe(before);
  });

  it('generated names: refused exactly when they hold a forbidden control character', async () => {
    const unit = fc.oneof(
      fc.constantFrom(...FORBIDDEN),
      fc.constantFrom('\t', '\n', '\r', 'a', 'é', '😀', ' ', '\u200b'),
    );
    const before = await callCount();
    let accepted = 0;
    for (const name of fc.sample(fc.string({ unit, minLength: 1, maxLength: 12 }), { numRuns: 40, seed: 21 })) {
      const res = await trigger(app, tenant.key, { phone_number: PHONE, name });
      const bad = [...name].some((c) => FORBIDDEN.includes(c));
      expect({ name, status: res.statusCode }).toEqual({ name, status: bad ? 400 : 200 });
      if (bad) expect(res.json<ErrorResponse>().error).toBe(NAME_RULE);
      else accepted++;
    }
    expect(await callCount()).toBe(before + accepted);
  });

  it('keeps tab, CR and LF exactly: in the stored call, in every webhook event and in the TwiML the agent gets', async () => {
    const name = 'Ada\tLovelace\r\nCountess\nof Lovelace\r';
    const res = await trigger(app, tenant.key, { phone_number: PHONE, name, email: 'ada@example.com' });
    expect(res.statusCode, res.body).toBe(200);
    const callId = callIdOf(res);
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });
    expect(call.name).toBe(name);

    const deadline = Date.now() + 20_000;
    const mine = () => receiver.received.filter((r) => r.body.includes(callId));
    while (mine().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(mine().length).toBeGreaterThanOrEqual(2);
    for (const { body } of mine()) expect(json<WebhookEvent>(body).data.name).toBe(name);

    const twiml = new DOMParser().parseFromString(
      streamTwiml('wss://agents.example/stream', handOffPairs('stream', call, [], 'token')),
      'text/xml',
    );
    const parameters = Array.from(twiml.getElementsByTagName('Parameter'));
    const value = (n: string) => parameters.find((p) => p.getAttribute('name') === n)?.getAttribute('value');
    expect([value('name'), value('email')]).toEqual([name, 'ada@example.com']);
  });
});

describe('email', () => {
  const refused = [
    'a..b.@b.com',
    '.a@b.com',
    'a.@b.com',
    'a..b@b.com',
    '.@b.com',
    'ada@localhost',
    '0@com',
    'a@b.c',
    'a@b.123',
    'a@1.2.3.4',
    'a@-b.com',
    'a@b-.com',
    'a@b..com',
    'a@.b.com',
    'a@b.com.',
    '"a b"@x.com',
    '"a"@x.com',
    'a@[127.0.0.1]',
    'a(c)@x.com',
    'ada@example.com\n',
    'a\u0000@b.com',
    'a\u0085@b.com',
    'a\t@b.com',
    'caf\u00e9@example.com',
    'ada@exämple.com',
    `${'a'.repeat(65)}@example.com`,
    `a@${'b'.repeat(64)}.com`,
    'a@b@c.com',
    '@b.com',
    'a@',
  ];
  const accepted = [
    'ada@example.com',
    'a.b@b.com',
    "o'brien+tag@mail.example.co.uk",
    'x@b.io',
    'A_B-c@Example.COM',
    "!#$%&'*+/=?^_`{|}~-@x.org",
    'a@b.xn--p1ai',
    'a@b1-2.c3',
    `${'a'.repeat(64)}@example.com`,
    `a@${'b'.repeat(63)}.com`,
  ];

  it.each(refused)('refuses %j with 400 "email must be a valid email address", storing nothing', async (email) => {
    const before = await callCount();
    const res = await trigger(app, tenant.key, { phone_number: PHONE, email });
    expect([res.statusCode, res.json()]).toEqual([
      400,
      { success: false, error: 'email must be a valid email address' },
    ]);
    expect(await callCount()).toBe(before);
  });

  it.each(accepted)('accepts %j and stores it as given', async (email) => {
    const res = await trigger(app, tenant.key, { phone_number: PHONE, email });
    expect(res.statusCode, res.body).toBe(200);
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(res) } })).email).toBe(email);
  });

  it('the published pattern says the same as the server (with and without the u flag)', () => {
    for (const flags of ['', 'u']) {
      const pattern = new RegExp(EMAIL_PATTERN, flags);
      expect(refused.filter((e) => pattern.test(e))).toEqual([]);
      expect(accepted.filter((e) => !pattern.test(e))).toEqual([]);
    }
  });
});
