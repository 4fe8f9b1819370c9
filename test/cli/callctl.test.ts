// callctl end to end: the operator flow of the README through runCli on a real database, its output contract, and the bin.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { spawnChild } from '../helpers/child-processes.js';
import { callctl } from '../helpers/cli.js';
import { match } from '../helpers/matchers.js';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { freshDatabase, testSecretsKey } from '../helpers/database.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BIN = fileURLToPath(new URL('../../bin/callctl.js', import.meta.url));

let url: string;
let prisma: PrismaClient;

beforeAll(async () => {
  ({ url } = await freshDatabase());
  prisma = createPrisma(url, { max: 2 });
});
afterAll(async () => {
  await prisma.$disconnect();
});

function cli(args: string[], env: Record<string, string> = {}) {
  return callctl(url, args, env);
}

/** One JSON object, newline-terminated, and nothing else. */
function onlyObject(text: string): Record<string, unknown> {
  expect(text.endsWith('\n')).toBe(true);
  expect(text.slice(0, -1)).not.toContain('\n');
  const value: unknown = JSON.parse(text);
  expect(value).toBeTypeOf('object');
  expect(Array.isArray(value)).toBe(false);
  return value as Record<string, unknown>;
}

async function ok(args: string[], env: Record<string, string> = {}) {
  const result = await cli([...args, '--json'], env);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return onlyObject(result.stdout);
}

async function fails(args: string[], code: number, env: Record<string, string> = {}): Promise<string> {
  const result = await cli([...args, '--json'], env);
  expect(result.stdout).toBe('');
  expect(result.code).toBe(code);
  const body = onlyObject(result.stderr);
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toBeTypeOf('string');
  return body.error as string;
}

describe('callctl operator flow', () => {
  let agencyId = '';
  let clientId = '';
  let agentId = '';

  it('migrate reports what it did (the template is already migrated)', async () => {
    const out = await ok(['migrate']);
    expect(out).toEqual({
      applied: [],
      already_applied: match.arrayContaining([match.stringMatching(/_init$/)]),
      secrets_sealed: 0,
    });
  });

  it('agency create and client create return ids', async () => {
    const agency = await ok(['agency', 'create', '--name', 'Acme Agency']);
    expect(Object.keys(agency)).toEqual(['id']);
    expect(agency.id).toMatch(UUID);
    agencyId = agency.id as string;
    const client = await ok(['client', 'create', '--agency', agencyId, '--name', 'Client One']);
    expect(client.id).toMatch(UUID);
    clientId = client.id as string;
    expect(await prisma.account.findUnique({ where: { id: clientId } })).toMatchObject({ kind: 'client', agencyId });
  });

  it('key generate shows a new key once and leaves exactly one active key', async () => {
    const first = await ok(['key', 'generate', agencyId]);
    const second = await ok(['key', 'generate', agencyId]);
    expect(first.key).toMatch(/^svc_sk_[0-9A-Za-z]+$/);
    expect(second.key).toMatch(/^svc_sk_/);
    expect(second.key).not.toBe(first.key);
    expect(await prisma.apiKey.count({ where: { accountId: agencyId, revokedAt: null } })).toBe(1);
    expect(await prisma.apiKey.count({ where: { accountId: agencyId } })).toBe(2);
  });

  it('key generate for people says the key is shown only once', async () => {
    const { code, stdout, stderr } = await cli(['key', 'generate', clientId]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^key: +svc_sk_/m);
    expect(stdout).toMatch(/shown only once/);
  });

  it('api-access off and on flips the account flag', async () => {
    expect(await ok(['api-access', agencyId, 'off'])).toMatchObject({ api_access: 'off' });
    expect((await prisma.account.findUniqueOrThrow({ where: { id: agencyId } })).apiAccessEnabled).toBe(false);
    expect(await ok(['api-access', agencyId, 'on'])).toMatchObject({ api_access: 'on' });
    expect((await prisma.account.findUniqueOrThrow({ where: { id: agencyId } })).apiAccessEnabled).toBe(true);
  });

  it('agent create takes --window twice, --timezone and --outside-window', async () => {
    const out = await ok([
      'agent',
      'create',
      '--account',
      clientId,
      '--name',
      'Closer',
      '--phone',
      '+14155550100',
      '--timezone',
      'America/New_York',
      '--window',
      'mon-fri 09:00-17:00',
      '--window',
      'sat,sun 10:00-14:00',
      '--outside-window',
      'reject',
    ]);
    expect(out.id).toMatch(UUID);
    agentId = out.id as string;
    const agent = await prisma.agent.findUniqueOrThrow({ where: { id: agentId } });
    expect(agent).toMatchObject({
      accountId: clientId,
      agencyId,
      timezone: 'America/New_York',
      outsideWindowPolicy: 'reject',
    });
    expect(agent.callingWindows).toHaveLength(2);
  });

  it("agent set-default refuses an agency its client's agent, and sets a client's own", async () => {
    // An account's default agent is one of its own: the agency's key would otherwise call with the client's number.
    const refusal = await fails(['agent', 'set-default', agencyId, agentId], 1);
    expect(refusal).toBe(
      `Agent ${agentId} does not belong to account ${agencyId}: an account's default agent is one of its own agents`,
    );
    expect((await prisma.account.findUniqueOrThrow({ where: { id: agencyId } })).defaultAgentId).toBeNull();
    expect(await ok(['agent', 'set-default', clientId, agentId])).toEqual({
      account_id: clientId,
      default_agent_id: agentId,
    });
    expect((await prisma.account.findUniqueOrThrow({ where: { id: clientId } })).defaultAgentId).toBe(agentId);
  });

  it('webhook set returns a whsec_ secret once and refuses private targets unless allowed', async () => {
    const out = await ok(['webhook', 'set', agencyId, '--url', 'https://hooks.example.com/calls']);
    expect(Object.keys(out)).toEqual(['secret', 'enabled']);
    expect(out.enabled).toBe(true);
    expect(out.secret).toMatch(/^whsec_/);
    expect((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { accountId: agencyId } })).url).toBe(
      'https://hooks.example.com/calls',
    );

    // The refusal says how local development gets plain http, and that the server needs the same setting.
    const refusal = await fails(['webhook', 'set', agencyId, '--url', 'http://127.0.0.1/x'], 1);
    expect(refusal).toMatch(/must use https/);
    expect(refusal).toContain('WEBHOOK_ALLOW_PRIVATE_TARGETS=true');
    expect(refusal).toMatch(/server/);
    const allowed = await ok(['webhook', 'set', agencyId, '--url', 'http://127.0.0.1/x'], {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    expect(allowed.secret).toMatch(/^whsec_/);
    expect(allowed.secret).not.toBe(out.secret);
  });

  it('calls list is empty; calls show and deliveries replay of unknown ids fail with exit 1', async () => {
    expect(await ok(['calls', 'list', agencyId])).toEqual({ calls: [] });
    expect(await ok(['calls', 'list', agencyId, '--status', 'completed'])).toEqual({ calls: [] });
    expect(await fails(['calls', 'list', agencyId, '--status', 'ringing'], 2)).toMatch(/status/i);
    expect(await fails(['calls', 'show', randomUUID()], 1)).toMatch(/No call/);
    expect(await fails(['deliveries', 'replay', randomUUID()], 1)).toMatch(/No delivery/);
  });

  it('agency set-plan changes the plan; clients and unknown accounts are refused', async () => {
    expect(await ok(['agency', 'set-plan', agencyId, 'starter'])).toMatchObject({ plan: 'starter' });
    expect((await prisma.account.findUniqueOrThrow({ where: { id: agencyId } })).plan).toBe('starter');
    await fails(['agency', 'set-plan', clientId, 'agency'], 1);
    expect(await fails(['key', 'generate', randomUUID()], 1)).toMatch(/No account/);
  });
});

describe('callctl usage, configuration and output', () => {
  it.each([
    [['frobnicate']],
    [['agency', 'delete']],
    [['agency', 'create']],
    [['agency', 'create', '--name', 'X', '--url', 'https://example.com']],
    [['agency', 'create', '--name']],
    [['api-access', randomUUID(), 'maybe']],
    [['key', 'generate']],
    [['key', 'generate', randomUUID(), 'extra']],
    [[]],
    [['agency']],
    [['agency', 'create', '--name', 'X', '--plan', 'gold']],
    [['agency', 'set-plan', randomUUID(), 'gold']],
    [['calls', 'list', randomUUID(), '--status', 'ringing']],
    [['agent', 'create', '--account', randomUUID(), '--name', 'A', '--outside-window', 'maybe']],
    [['agent', 'create', '--account', randomUUID(), '--name', 'A', '--window', 'someday 09:00-17:00']],
  ])('%j is a usage error (exit 2)', async (args) => {
    await fails(args, 2);
  });

  it('a bad environment exits 78 naming the variable', async () => {
    expect(await fails(['agency', 'create', '--name', 'X'], 78, { PORT: 'abc' })).toMatch(/PORT/);
  });

  it('help lists every command, for people and as JSON', async () => {
    const human = await cli(['--help']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('callctl agency create --name <name>');
    expect(human.stdout).toContain('callctl deliveries replay <delivery-id>');
    expect(human.stdout).toContain('callctl user link <user-id|email>');
    expect(human.stdout).toContain('callctl user enable <user-id>');
    expect(human.stdout).toContain('callctl calls cancel <call-id>');
    expect(human.stdout).toContain('callctl agent update <agent-id> [--name <name>]');
    expect(human.stdout).toContain('callctl dnc import <account-id> <file.csv>');
    expect(human.stdout).toContain('callctl rules set <account-id> [--on|--off]');
    expect(human.stdout).toContain('callctl calls export <account-id> --from <YYYY-MM-DD> --to <YYYY-MM-DD>');
    const out = await ok(['help']);
    expect(out.commands).toHaveLength(COMMANDS.length);
    expect(out.commands).toHaveLength(39);
  });

  it('every group lists its commands and their options; every command its own options', async () => {
    const groups = [...new Set(COMMANDS.map((c) => c.words[0]!))];
    for (const group of groups) {
      const help = await cli([group, '--help']);
      expect(help.code, group).toBe(0);
      expect(help.stderr).toBe('');
      for (const command of COMMANDS.filter((c) => c.words[0] === group)) {
        expect(help.stdout, group).toContain(command.usage.split('\n')[0]);
        for (const flag of command.flags) expect(help.stdout, `${group} --${flag}`).toContain(`--${flag} `);
        const one = await cli([...command.words, '--help']);
        expect(one.code).toBe(0);
        expect(one.stdout).toContain(`usage: ${command.usage}`);
        for (const flag of command.flags) expect(one.stdout).toContain(`--${flag} `);
        expect(one.stdout).toContain('--json');
      }
    }
    const agency = await cli(['agency', '--help']);
    expect(agency.stdout).toMatch(/callctl agency create --name <name>/);
    expect(agency.stdout).toMatch(/callctl agency set-plan <agency-id> <plan>/);
    expect(agency.stdout).toMatch(/--plan agency\|starter/);
    expect(await ok(['agency', '--help'])).toMatchObject({
      group: 'agency',
      commands: [{ command: 'agency create' }, { command: 'agency set-plan' }],
    });
    expect(await ok(['help', 'webhook', 'enable'])).toMatchObject({
      command: 'webhook enable',
      usage: 'callctl webhook enable <account-id>',
    });
  });

  it("a group without a command is a usage error that lists the group's commands", async () => {
    const { code, stdout, stderr } = await cli(['webhook']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('callctl webhook show <account-id>');
    expect(stderr).toContain('Missing command after "webhook"');
  });

  it('output for people has no JSON', async () => {
    const { code, stdout, stderr } = await cli(['agency', 'create', '--name', 'People Agency']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^id: [0-9a-f-]{36}\n$/);
    expect(stdout).not.toMatch(/[{}]/);
  });

  it('usage errors for people name the command usage', async () => {
    const { code, stdout, stderr } = await cli(['agency', 'create']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('Missing --name');
    expect(stderr).toContain('usage: callctl agency create');
  });
});

describe('bin/callctl.js', () => {
  it('runs as a process and exits 0 with one JSON object', async () => {
    const child = spawnChild(process.execPath, [BIN, 'agency', 'create', '--name', 'X', '--json'], {
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent', SECRETS_KEY: testSecretsKey() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(onlyObject(stdout).id).toMatch(UUID);
  }, 20_000);
});
