// The agent form's hand-off (issue 47, point 1): a media stream (wss:// URL, empty for the service's default, static
// parameters one name=value a line) or a SIP destination (sip:/sips: URI, static X- headers). A good one is stored,
// shown back in the form and audited; every hostile value is refused next to its field, in words that name it, and
// nothing changes; another tenant's agent cannot be changed; development (WEBHOOK_ALLOW_PRIVATE_TARGETS) allows a
// local host.
import { Value } from '@sinclair/typebox/value';
import { beforeAll, describe, expect, it } from 'vitest';
import { AgentForm } from '../../schemas/dashboard/agents.js';
import { handoffInputProblem } from '../../src/domain/hand-off-settings.js';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

let app: App;
let owner: Visitor;
let agencyId: string;
let agentId: string;

const BASE: [string, string][] = [
  ['name', 'Hand-off'],
  ['phone', '+14155550100'],
  ['timezone', 'UTC'],
  ['policy', 'queue'],
];

async function post(visitor: Visitor, action: string, page: string, pairs: [string, string][]) {
  expect((await visitor.get(page)).status).toBe(200);
  return visitor.request('POST', action, [['_csrf', visitor.lastCsrf ?? ''], ...pairs] as unknown as Record<
    string,
    string
  >);
}
const edit = (pairs: [string, string][], visitor = owner, id = agentId) =>
  post(visitor, `/dashboard/agents/${id}`, `/dashboard/agents/${id}`, [...BASE, ...pairs]);

/** The field errors of a page, by field id. */
function fieldErrors(body: string): Record<string, string> {
  return Object.fromEntries(
    [...body.matchAll(/<p class="field-error" id="f-([\w-]+)-error">([^<]*)<\/p>/g)].map((m) => [m[1]!, m[2]!]),
  );
}

const row = (id = agentId) => prismaOf(app).agent.findUniqueOrThrow({ where: { id } });
const lastAudit = (id: string) =>
  prismaOf(app).auditEntry.findFirst({
    where: { detail: { path: ['agent_id'], equals: id } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Hand-off agency' }));
  await createUserWithPassword(app.storage, agencyId, 'owner@handoff.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@handoff.example')).status).toBe(303);
  ({ id: agentId } = await createAgent(app.storage, {
    accountId: agencyId,
    name: 'Hand-off',
    phone: '+14155550100',
    now: new Date(),
  }));
});

describe('the hand-off on the agent form', () => {
  it("starts on the service's stream, and says so", async () => {
    const page = await owner.get('/dashboard/agents/new');
    expect(page.body).toContain('<input type="radio" name="handoff" value="stream" checked>');
    expect(page.body).toContain("Empty: this service's default stream.");
    expect((await owner.get('/dashboard/agents')).body).toContain(
      '<dt>Hand-off</dt><dd>The service&#39;s default stream</dd>',
    );
    expect(await row()).toMatchObject({ handoff: 'stream', streamUrl: null, streamParameters: [], sipUri: null });
  });

  it('stores a stream with its parameters, shows them back, and audits what changed', async () => {
    const res = await edit([
      ['handoff', 'stream'],
      ['stream_url', ' wss://bots.example.com/twilio?tenant=acme '],
      ['stream_parameters', 'bot = sales\r\n\r\nelevenlabs_agent_id=agent_01jz=x\r\n'],
      ['sip_uri', ''],
      ['sip_headers', ''],
    ]);
    expect(res.status, res.body).toBe(303);
    expect(await row()).toMatchObject({
      handoff: 'stream',
      streamUrl: 'wss://bots.example.com/twilio?tenant=acme',
      streamParameters: [
        { name: 'bot', value: 'sales' },
        { name: 'elevenlabs_agent_id', value: 'agent_01jz=x' },
      ],
      sipUri: null,
      sipHeaders: [],
    });
    const audit = await lastAudit(agentId);
    expect(audit).toMatchObject({ action: 'agent_changed', actorKind: 'user' });
    expect(audit!.detail).toEqual({
      agent_id: agentId,
      stream_url: 'wss://bots.example.com/twilio?tenant=acme',
      stream_parameters: [
        { name: 'bot', value: 'sales' },
        { name: 'elevenlabs_agent_id', value: 'agent_01jz=x' },
      ],
    });
    const page = await owner.get(`/dashboard/agents/${agentId}`);
    expect(page.body).toContain('value="wss://bots.example.com/twilio?tenant=acme"');
    expect(page.body).toContain('>bot=sales\nelevenlabs_agent_id=agent_01jz=x</textarea>');
    expect((await owner.get('/dashboard/agents')).body).toContain(
      '<dt>Hand-off</dt><dd>Stream wss://bots.example.com/twilio?tenant=acme, 2 parameters</dd>',
    );
  });

  it('switches to SIP keeping the stream settings, and back; the same form again changes nothing', async () => {
    const sip: [string, string][] = [
      ['handoff', 'sip'],
      ['stream_url', 'wss://bots.example.com/twilio?tenant=acme'],
      ['stream_parameters', 'bot=sales\nelevenlabs_agent_id=agent_01jz=x'],
      ['sip_uri', 'SIP:+15105550100@acme.sip.livekit.cloud:5061;transport=tls'],
      ['sip_headers', 'X-Bot=sales\nX-Tenant=acme'],
    ];
    expect((await edit(sip)).status).toBe(303);
    expect(await row()).toMatchObject({
      handoff: 'sip',
      streamUrl: 'wss://bots.example.com/twilio?tenant=acme',
      sipUri: 'sip:+15105550100@acme.sip.livekit.cloud:5061;transport=tls',
      sipHeaders: [
        { name: 'X-Bot', value: 'sales' },
        { name: 'X-Tenant', value: 'acme' },
      ],
    });
    expect((await lastAudit(agentId))!.detail).toEqual({
      agent_id: agentId,
      handoff: 'sip',
      sip_uri: 'sip:+15105550100@acme.sip.livekit.cloud:5061;transport=tls',
      sip_headers: [
        { name: 'X-Bot', value: 'sales' },
        { name: 'X-Tenant', value: 'acme' },
      ],
    });
    const page = await owner.get(`/dashboard/agents/${agentId}`);
    expect(page.body).toContain('<input type="radio" name="handoff" value="sip" checked>');
    expect((await owner.get('/dashboard/agents')).body).toContain(
      '<dt>Hand-off</dt><dd>SIP sip:+15105550100@acme.sip.livekit.cloud:5061;transport=tls, 2 headers</dd>',
    );
    expect(page.body).toContain('>X-Bot=sales\nX-Tenant=acme</textarea>');

    const audits = await prismaOf(app).auditEntry.count();
    const again = await edit(sip);
    expect(again.status).toBe(303);
    expect((await owner.get('/dashboard/agents')).body).toContain('Nothing changed.');
    expect(await prismaOf(app).auditEntry.count()).toBe(audits);

    // Back to the default stream: an empty URL.
    expect((await edit([['handoff', 'stream'], ['stream_url', ''], ...sip.slice(2)])).status).toBe(303);
    expect(await row()).toMatchObject({
      handoff: 'stream',
      streamUrl: null,
      sipUri: 'sip:+15105550100@acme.sip.livekit.cloud:5061;transport=tls',
    });
  });

  const pairs = (n: number, name = (i: number) => `p${i}`) =>
    Array.from({ length: n }, (_, i) => `${name(i)}=v`).join('\n');
  it.each([
    ['stream_url', 'http://bots.example.com/', 'must start with wss://'],
    ['stream_url', 'ws://bots.example.com/', 'must start with wss://'],
    ['stream_url', 'javascript:alert(1)', 'must start with wss://'],
    ['stream_url', `wss://bots.example.com/${'a'.repeat(233)}`, 'at most 255 characters'],
    ['stream_url', 'wss://bots.example.com/\u0007', 'control characters'],
    ['stream_url', 'wss://bots.example.com/\u0085', 'control characters'],
    ['stream_url', 'wss://bots.example.com/\u0000', 'control characters'],
    ['stream_url', 'wss://bots.example.com/a\r\nX-Injected: 1', 'control characters'],
    ['stream_url', 'wss://bots.example.com/a%0d%0aX-Injected:%201', 'encoded control characters'],
    ['stream_url', 'wss://bots.example.com:0/', 'port must be from 1 to 65535'],
    ['stream_url', 'wss://user:secret@bots.example.com/', 'user name or password'],
    ['stream_url', 'wss://10.0.0.1/stream', 'host 10.0.0.1 is a private'],
    ['stream_url', 'wss://127.0.0.1:8765/', 'host 127.0.0.1 is a private'],
    ['stream_url', 'wss://169.254.169.254/latest', 'host 169.254.169.254 is a private'],
    ['stream_url', 'wss://[::1]/', 'host [::1] is a private'],
    ['stream_url', 'wss://localhost/', 'host localhost is a private'],
    ['stream_url', 'wss://0x7f.1/', 'host 127.0.0.1 is a private'],
    ['stream_parameters', pairs(11), 'at most 10, not 11'],
    ['stream_parameters', 'bot=a\nbot=b', 'bot is given twice'],
    ['stream_parameters', 'call_id=forged', 'call_id is sent by the service itself'],
    ['stream_parameters', 'Context_Token=forged', 'Context_Token is sent by the service itself'],
    ['stream_parameters', 'bad-name=1', '"bad-name" is not a name'],
    ['stream_parameters', `${'n'.repeat(41)}=1`, 'is not a name'],
    ['stream_parameters', `bot=${'v'.repeat(201)}`, 'at most 200 characters'],
    ['stream_parameters', 'no value here', 'write each as name=value'],
    ['stream_parameters', 'bot=a\u0000b', 'must not contain control characters'],
    ['sip_uri', 'tel:+14155550100', 'must start with sip: or sips:'],
    ['sip_uri', 'sip:bot@sip.example.com?X-Call-Id=forged', 'must not carry headers'],
    ['sip_uri', 'sip:sip.example.com', 'must read user@host'],
    ['sip_uri', `sip:bot@${'a'.repeat(250)}.com`, 'at most 254 characters'],
    ['sip_uri', 'sip:bot@10.0.0.1', 'host 10.0.0.1 is a private'],
    ['sip_uri', 'sip:bot@[::1]:5060', 'host [::1] is a private'],
    ['sip_uri', 'sip:bot@169.254.169.254', 'host 169.254.169.254 is a private'],
    ['sip_uri', 'sip:bot@example.com:70000', 'port must be from 1 to 65535'],
    ['sip_uri', 'sip:bot@example.com\u0000', 'control characters'],
    ['sip_uri', 'sip:bot@example.com\r\nVia: evil', 'control characters'],
    ['sip_uri', 'sip:bot%0D%0AVia:%20evil@example.com', 'encoded control characters'],
    ['sip_headers', pairs(11, (i) => `X-H${i}`), 'at most 10, not 11'],
    ['sip_headers', 'X-Bot=a\nx-bot=b', 'is not a name'],
    ['sip_headers', 'X-Bot=a\nX-BOT=b', 'X-BOT is given twice'],
    ['sip_headers', 'X-Context-Token=forged', 'X-Context-Token is sent by the service itself'],
    ['sip_headers', 'X-call-id=forged', 'X-call-id is sent by the service itself'],
    ['sip_headers', 'Bot=sales', '"Bot" is not a name'],
    ['sip_headers', 'X-Bot=a\u0007b', 'must not contain control characters'],
    ['sip_headers', 'X-Bot=\u0000', 'must not contain control characters'],
    ['sip_headers', 'X-Twilio-Bot=sales', 'Twilio keeps X-Twilio- headers to itself'],
    // Ten headers of 200 characters each do not fit in the SIP address beside the call's own (Twilio: under 1,024).
    [
      'sip_headers',
      pairs(10, (i) => `X-H${i}`).replace(/=\S*/g, `=${'v'.repeat(200)}`),
      'together at most 682 characters',
    ],
  ])('refuses %s %j next to the field, changing nothing', async (field, value, words) => {
    const before = await row();
    const audits = await prismaOf(app).auditEntry.count();
    const res = await edit([[field, value]]);
    expect(res.status).toBe(400);
    const errors = fieldErrors(res.body);
    expect(Object.keys(errors)).toEqual([field]);
    expect(errors[field]).toContain(html(words));
    // The field names itself, and the page keeps what was typed.
    expect(errors[field]).toMatch(/^(The stream URL|Stream parameters|The SIP address|SIP headers)/);
    expect(res.body).toContain(`id="f-${field}-error"`);
    expect(await row()).toEqual(before);
    expect(await prismaOf(app).auditEntry.count()).toBe(audits);
  });

  it('refuses a SIP hand-off without its address, next to the address', async () => {
    const before = await row();
    const res = await edit([
      ['handoff', 'sip'],
      ['sip_uri', ''],
    ]);
    expect(res.status).toBe(400);
    expect(fieldErrors(res.body)).toEqual({
      sip_uri: html(
        'A SIP hand-off needs the SIP address to hand calls to, e.g. sip:bot@sip.example.com;transport=tls.',
      ),
    });
    expect(await row()).toEqual(before);
  });

  it('creates an agent with its hand-off, audited', async () => {
    const res = await post(owner, '/dashboard/agents', '/dashboard/agents/new', [
      ...BASE.filter(([field]) => field !== 'name'),
      ['name', 'Created with SIP'],
      ['handoff', 'sip'],
      ['sip_uri', 'sips:agent@sip.api.openai.example'],
      ['sip_headers', 'X-Project=proj_123'],
    ]);
    expect(res.status, res.body).toBe(303);
    const created = await prismaOf(app).agent.findFirstOrThrow({ where: { name: 'Created with SIP' } });
    expect(created).toMatchObject({
      handoff: 'sip',
      sipUri: 'sips:agent@sip.api.openai.example',
      sipHeaders: [{ name: 'X-Project', value: 'proj_123' }],
    });
    expect((await lastAudit(created.id))!.detail).toMatchObject({
      handoff: 'sip',
      stream_url: null,
      sip_uri: 'sips:agent@sip.api.openai.example',
      sip_headers: [{ name: 'X-Project', value: 'proj_123' }],
    });
  });
});

describe("another tenant's agent", () => {
  it('cannot be changed, nor seen (404), and nothing changes', async () => {
    const { id: otherAgency } = await createAgency(app.storage, { name: 'Other agency' });
    const { id: otherClient } = await createClient(app.storage, {
      agencyId: otherAgency,
      name: 'Other client',
      now: new Date(),
    });
    const { id: theirs } = await createAgent(app.storage, { accountId: otherClient, name: 'Theirs', now: new Date() });
    const before = await row(theirs);
    const audits = await prismaOf(app).auditEntry.count();
    const res = await owner.request('POST', `/dashboard/agents/${theirs}`, [
      ['_csrf', owner.lastCsrf ?? ''],
      ...BASE,
      ['handoff', 'sip'],
      ['sip_uri', 'sip:hijack@attacker.example'],
      ['stream_url', 'wss://attacker.example/'],
    ] as unknown as Record<string, string>);
    expect(res.status).toBe(404);
    expect(await row(theirs)).toEqual(before);
    expect(await prismaOf(app).auditEntry.count()).toBe(audits);
  });
});

describe('in development (WEBHOOK_ALLOW_PRIVATE_TARGETS=true)', () => {
  it('a local host is allowed; the scheme and the rest are not', async () => {
    const { app: dev } = await buildTestApp({ env: { ...DASHBOARD_ENV, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    const { id: agency } = await createAgency(dev.storage, { name: 'Dev agency' });
    await createUserWithPassword(dev.storage, agency, 'dev@handoff.example');
    const visitor = new Visitor(dev);
    expect((await visitor.signIn('dev@handoff.example')).status).toBe(303);
    const { id } = await createAgent(dev.storage, { accountId: agency, name: 'Dev', now: new Date() });
    const page = `/dashboard/agents/${id}`;
    const ok = await post(visitor, page, page, [
      ...BASE,
      ['stream_url', 'wss://127.0.0.1:8765/'],
      ['sip_uri', 'sip:bot@localhost'],
    ]);
    expect(ok.status, ok.body).toBe(303);
    expect(await prismaOf(dev).agent.findUniqueOrThrow({ where: { id } })).toMatchObject({
      streamUrl: 'wss://127.0.0.1:8765/',
      sipUri: 'sip:bot@localhost',
    });
    const refused = await post(visitor, page, page, [...BASE, ['stream_url', 'ws://127.0.0.1:8765/']]);
    expect(refused.status).toBe(400);
    expect(fieldErrors(refused.body).stream_url).toContain('must start with wss://');
  });
});

describe('the form schema states the hand-off rules the domain applies, no stricter', () => {
  const accepts = (fields: Record<string, string>) =>
    Value.Check(AgentForm, { _csrf: 'token', name: 'Agent', phone: '', timezone: 'UTC', ...fields });
  const addresses = [
    'wss://bots.example.com/twilio?tenant=acme',
    ' wss://bots.example.com ',
    'WSS://bots.example.com/',
    'wss://[2001:4860:4860::8888]:443/x',
    '',
    'http://bots.example.com/',
    'ws://bots.example.com/',
    'wss://bots example.com/',
    'wss://bots.example.com/\\x',
    'wss://bots.example.com/\u0000',
    'wss://bots.example.com/\u0085',
  ];
  const sipAddresses = [
    'sip:bot@sip.example.com;transport=tls',
    'SIPS:+15105550100@acme.sip.livekit.cloud:5061',
    '',
    'sip:bot@sip.example.com?X-A=1',
    'sip:bot @sip.example.com',
    'tel:+14155550100',
    'sip:bot@sip.example.com\r\n',
  ];
  const pairs = ['bot=sales', 'bot = sales\r\nlang=en\r\n', '', 'bot=a\u0007b', 'bot=\u0000', 'X-Bot=a\tb'];

  it('refuses by its patterns only what the domain refuses too', () => {
    for (const value of addresses) {
      const domain = value.trim() === '' ? null : handoffInputProblem({ streamUrl: value.trim() });
      if (!accepts({ stream_url: value })) expect(domain, value).not.toBeNull();
      if (domain === null) expect(accepts({ stream_url: value }), value).toBe(true);
    }
    for (const value of sipAddresses) {
      const domain = value.trim() === '' ? null : handoffInputProblem({ sipUri: value.trim() });
      if (!accepts({ sip_uri: value })) expect(domain, value).not.toBeNull();
      if (domain === null) expect(accepts({ sip_uri: value }), value).toBe(true);
    }
    for (const value of pairs) {
      const lines = value.split(/\r\n|\r|\n/);
      for (const [field, key] of [
        ['stream_parameters', 'streamParameters'],
        ['sip_headers', 'sipHeaders'],
      ] as const) {
        const domain = handoffInputProblem({ [key]: lines });
        if (!accepts({ [field]: value })) expect(domain, value).not.toBeNull();
      }
    }
    expect(accepts({ handoff: 'sip' })).toBe(true);
    expect(accepts({ handoff: 'tel' })).toBe(false);
  });
});
