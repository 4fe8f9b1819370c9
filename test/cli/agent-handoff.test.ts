// callctl's hand-off options on a real database (issue 47, point 1): `agent create|update --handoff --stream-url
// --stream-param --sip-uri --sip-header`, stored, audited as the operator, cleared with default and none; every hostile
// value refused in the words the dashboard gives the field (exit 2; a local host exit 1, since whether one is allowed
// is the configuration's, WEBHOOK_ALLOW_PRIVATE_TARGETS), and nothing changed.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInputProblem } from '../../src/admin/agents.js';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/database.js';
import { json } from '../helpers/json.js';

let url: string;
let prisma: PrismaClient;
let accountId: string;

beforeAll(async () => {
  ({ url } = await freshDatabase());
  prisma = createPrisma(url, { max: 2 });
  accountId = (await ok(['agency', 'create', '--name', 'Hand-off Agency'])).id as string;
});
afterAll(async () => {
  await prisma.$disconnect();
});

async function ok(args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const result = await callctl(url, [...args, '--json'], env);
  expect(result.stderr, args.join(' ')).toBe('');
  expect(result.code, args.join(' ')).toBe(0);
  return result.json();
}

async function fails(args: string[], code: number): Promise<string> {
  const result = await callctl(url, [...args, '--json']);
  expect(result.stdout, args.join(' ')).toBe('');
  expect(result.code, args.join(' ')).toBe(code);
  return json<CliError>(result.stderr).error;
}

const agentRow = (id: string) => prisma.agent.findUniqueOrThrow({ where: { id } });
const lastAudit = (id: string) =>
  prisma.auditEntry.findFirst({
    where: { detail: { path: ['agent_id'], equals: id } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
const newAgent = async (...options: string[]) =>
  (await ok(['agent', 'create', '--account', accountId, '--name', 'Bot', ...options])).id as string;

describe('callctl agent create|update: the hand-off', () => {
  it("creates an agent on the service's stream unless told", async () => {
    expect(await agentRow(await newAgent())).toMatchObject({
      handoff: 'stream',
      streamUrl: null,
      streamParameters: [],
      sipUri: null,
      sipHeaders: [],
    });
  });

  it('stores a stream with its parameters, audited as the operator', async () => {
    const id = await newAgent(
      '--stream-url',
      'wss://bots.example.com/twilio',
      '--stream-param',
      'bot=sales',
      '--stream-param',
      'elevenlabs_agent_id=agent_01jz',
    );
    expect(await agentRow(id)).toMatchObject({
      handoff: 'stream',
      streamUrl: 'wss://bots.example.com/twilio',
      streamParameters: [
        { name: 'bot', value: 'sales' },
        { name: 'elevenlabs_agent_id', value: 'agent_01jz' },
      ],
    });
    const audit = await lastAudit(id);
    expect(audit).toMatchObject({ action: 'agent_created', actorKind: 'operator' });
    expect(audit!.detail).toMatchObject({
      handoff: 'stream',
      stream_url: 'wss://bots.example.com/twilio',
      stream_parameters: [
        { name: 'bot', value: 'sales' },
        { name: 'elevenlabs_agent_id', value: 'agent_01jz' },
      ],
      sip_uri: null,
      sip_headers: [],
    });
  });

  it('switches to SIP with --sip-uri, keeps the stream settings, clears with none and default', async () => {
    const id = await newAgent('--stream-url', 'wss://bots.example.com/twilio', '--stream-param', 'bot=sales');
    const out = await ok([
      'agent',
      'update',
      id,
      '--sip-uri',
      'sips:bot@sip.example.com:5061;transport=tls',
      '--sip-header',
      'X-Bot=sales',
      '--sip-header',
      'X-Tenant=acme',
    ]);
    expect(out.changed).toEqual(['handoff', 'sip_uri', 'sip_headers']);
    expect(await agentRow(id)).toMatchObject({
      handoff: 'sip',
      streamUrl: 'wss://bots.example.com/twilio',
      streamParameters: [{ name: 'bot', value: 'sales' }],
      sipUri: 'sips:bot@sip.example.com:5061;transport=tls',
      sipHeaders: [
        { name: 'X-Bot', value: 'sales' },
        { name: 'X-Tenant', value: 'acme' },
      ],
    });
    expect((await lastAudit(id))!.detail).toEqual({
      agent_id: id,
      handoff: 'sip',
      sip_uri: 'sips:bot@sip.example.com:5061;transport=tls',
      sip_headers: [
        { name: 'X-Bot', value: 'sales' },
        { name: 'X-Tenant', value: 'acme' },
      ],
    });

    // A SIP hand-off cannot lose its address (exit 1: it needs the stored kind); nothing changes.
    const stored = await agentRow(id);
    expect(await fails(['agent', 'update', id, '--sip-uri', 'none'], 1)).toMatch(/^A SIP hand-off needs the SIP/);
    expect(await agentRow(id)).toEqual(stored);

    const back = await ok([
      'agent',
      'update',
      id,
      '--handoff',
      'stream',
      '--stream-url',
      'default',
      '--stream-param',
      'none',
    ]);
    expect(back.changed).toEqual(['handoff', 'stream_url', 'stream_parameters']);
    expect(await agentRow(id)).toMatchObject({ handoff: 'stream', streamUrl: null, streamParameters: [] });
    const cleared = await ok(['agent', 'update', id, '--sip-uri', 'none', '--sip-header', 'none']);
    expect(cleared.changed).toEqual(['sip_uri', 'sip_headers']);
    expect(await agentRow(id)).toMatchObject({ handoff: 'stream', sipUri: null, sipHeaders: [] });

    // The same again: nothing changed, nothing recorded.
    const audits = await prisma.auditEntry.count();
    expect((await ok(['agent', 'update', id, '--handoff', 'stream', '--stream-url', 'default'])).changed).toEqual([]);
    expect(await prisma.auditEntry.count()).toBe(audits);
  });

  const pairs = (n: number, flag: string, name: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => [flag, `${name(i)}=v`]).flat();
  it.each([
    [['--stream-url', 'http://bots.example.com/'], /must start with wss:\/\//],
    [['--stream-url', 'ws://bots.example.com/'], /must start with wss:\/\//],
    [['--stream-url', 'javascript:alert(1)'], /must start with wss:\/\//],
    [['--stream-url', `wss://bots.example.com/${'a'.repeat(233)}`], /at most 255 characters/],
    [['--stream-url', 'wss://bots.example.com/\r\nX: 1'], /control characters/],
    [['--stream-url', 'wss://bots.example.com/\u0000'], /control characters/],
    [['--stream-url', 'wss://user:pw@bots.example.com/'], /user name or password/],
    [['--stream-url', 'wss://bots.example.com\\@evil.example/'], /backslash/],
    [['--stream-param', 'call_id=forged'], /call_id is sent by the service itself/],
    [['--stream-param', 'bot=a', '--stream-param', 'bot=b'], /bot is given twice/],
    [pairs(11, '--stream-param', (i) => `p${i}`), /at most 10, not 11/],
    [['--stream-param', 'bad-name=1'], /"bad-name" is not a name/],
    [['--stream-param', `bot=${'v'.repeat(201)}`], /at most 200 characters/],
    [['--stream-param', 'bot=a\nb'], /control characters/],
    [['--stream-param', 'bot'], /name=value/],
    [['--stream-param', 'none', '--stream-param', 'bot=a'], /^--stream-param none/],
    [['--sip-uri', 'tel:+14155550100'], /must start with sip: or sips:/],
    [['--sip-uri', 'sip:bot@example.com?X-Call-Id=forged'], /must not carry headers/],
    [['--sip-uri', `sip:bot@${'a'.repeat(250)}.com`], /at most 254 characters/],
    [['--sip-uri', 'sip:bot@example.com\r\nVia: evil'], /control characters/],
    [['--sip-header', 'X-Context-Token=forged'], /X-Context-Token is sent by the service itself/],
    [['--sip-header', 'X-Bot=a', '--sip-header', 'X-BOT=b'], /X-BOT is given twice/],
    [pairs(11, '--sip-header', (i) => `X-H${i}`), /at most 10, not 11/],
    [['--sip-header', 'Bot=sales'], /"Bot" is not a name/],
    [['--sip-header', 'X-Bot=a\r\nVia: evil'], /control characters/],
    [['--handoff', 'tel'], /stream or sip/],
    [['--handoff', 'sip'], /^A SIP hand-off needs the SIP address/],
    [['--stream-url', 'wss://a.example/', '--sip-uri', 'sip:b@c.example'], /^Both --stream-url and --sip-uri given/],
  ])('refuses %j before opening the database (exit 2), naming the field', async (options, words) => {
    const before = await prisma.agent.count();
    const error = await fails(['agent', 'create', '--account', randomUUID(), '--name', 'Refused', ...options], 2);
    expect(error).toMatch(words);
    expect(error).toMatch(/^(The stream URL|Stream parameters|The SIP address|SIP headers|The hand-off|A SIP|--|Both)/);
    expect(await prisma.agent.count()).toBe(before);
  });

  it.each([
    ['--stream-url', 'wss://10.0.0.1/stream'],
    ['--stream-url', 'wss://127.0.0.1:8765/'],
    ['--stream-url', 'wss://169.254.169.254/latest'],
    ['--stream-url', 'wss://[::1]/'],
    ['--stream-url', 'wss://localhost/'],
    ['--sip-uri', 'sip:bot@10.0.0.1'],
    ['--sip-uri', 'sip:bot@[::1]'],
    ['--sip-uri', 'sip:bot@169.254.169.254:5060'],
  ])('refuses %s %s when it runs (exit 1), changing nothing; development allows it', async (flag, value) => {
    const id = await newAgent();
    const stored = await agentRow(id);
    const audits = await prisma.auditEntry.count();
    const error = await fails(['agent', 'update', id, flag, value], 1);
    expect(error).toMatch(/host .* is a private, loopback or link-local address/);
    expect(error).toBe(agentInputProblem(flag === '--stream-url' ? { streamUrl: value } : { sipUri: value }));
    expect(await agentRow(id)).toEqual(stored);
    expect(await prisma.auditEntry.count()).toBe(audits);
    await ok(['agent', 'update', id, flag, value], { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  });

  it('refuses an unknown agent (exit 1)', async () => {
    expect(await fails(['agent', 'update', randomUUID(), '--stream-url', 'wss://bots.example.com/'], 1)).toMatch(
      /^No agent /,
    );
  });
});
