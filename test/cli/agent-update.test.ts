// callctl's agent settings on a real database: `agent create` with the retry, voicemail and calling-hours options,
// `agent update` changing only the options given (the existing fields too), both refusing what the dashboard refuses
// in the same words with the same exit codes, audited as the operator; and the help's examples run as written.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInputProblem, newAgentProblem } from '../../src/admin/agents.js';
import { AGENT_COMMANDS } from '../../src/cli/agent-commands.js';
import { reachSettingsProblem } from '../../src/domain/agent-settings.js';
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
  accountId = (await ok(['agency', 'create', '--name', 'Settings Agency'])).id as string;
});
afterAll(async () => {
  await prisma.$disconnect();
});

async function ok(args: string[]): Promise<Record<string, unknown>> {
  const result = await callctl(url, [...args, '--json']);
  expect(result.stderr, args.join(' ')).toBe('');
  expect(result.code, args.join(' ')).toBe(0);
  return result.json();
}

/** The error of a command that fails with `code`, as --json prints it. */
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

async function newAgent(...options: string[]): Promise<string> {
  const out = await ok(['agent', 'create', '--account', accountId, '--name', 'Front desk', ...options]);
  return out.id as string;
}

describe('callctl agent create: retries, voicemail, whose time the windows are read in', () => {
  it('takes every setting and audits it as the operator', async () => {
    const id = await newAgent(
      '--phone',
      '+14155550100',
      '--max-attempts',
      '3',
      '--retry-on',
      'busy, no_answer,voicemail',
      '--retry-waits',
      '15,60',
      '--voicemail',
      'leave_message',
      '--voicemail-message',
      'Hello {{name}}, we will call again.',
      '--window-timezone',
      'recipient',
      '--window',
      'mon-fri 09:00-18:00',
    );
    expect(await agentRow(id)).toMatchObject({
      maxAttempts: 3,
      retryOn: ['busy', 'no_answer', 'voicemail'],
      retryWaitsMinutes: [15, 60],
      voicemail: 'leave_message',
      voicemailMessage: 'Hello {{name}}, we will call again.',
      windowTimezone: 'recipient',
    });
    const audit = await lastAudit(id);
    expect(audit).toMatchObject({ action: 'agent_created', actorKind: 'operator' });
    expect(audit!.detail).toMatchObject({
      max_attempts: 3,
      retry_on: ['busy', 'no_answer', 'voicemail'],
      retry_waits_minutes: [15, 60],
      voicemail: 'leave_message',
      window_timezone: 'recipient',
    });
  });

  it("keeps today's behaviour without them", async () => {
    expect(await agentRow(await newAgent())).toMatchObject({
      maxAttempts: 1,
      retryOn: [],
      retryWaitsMinutes: [30, 120, 1440],
      voicemail: 'off',
      voicemailMessage: null,
      windowTimezone: 'agent',
    });
  });

  it.each([
    [['--max-attempts', '0']],
    [['--max-attempts', '6']],
    [['--max-attempts', 'three']],
    [['--max-attempts', '2', '--retry-on', 'rejected']],
    [['--max-attempts', '2', '--retry-on', 'busy,ringing']],
    [['--retry-waits', '0']],
    [['--retry-waits', '30,120,1440,2880']],
    [['--retry-waits', '10081']],
    [['--voicemail', 'maybe']],
    [['--window-timezone', 'callee']],
    [['--voicemail', 'hang_up', '--voicemail-message', 'Hi\tthere']],
    [['--voicemail', 'hang_up', '--voicemail-message', 'x'.repeat(501)]],
    [['--voicemail', 'hang_up', '--voicemail-message', 'Hi {{first_name}}']],
    [['--voicemail', 'leave_message']],
    [['--max-attempts', '3']],
    [['--max-attempts', '2', '--retry-on', 'voicemail']],
  ])('refuses %j before opening the database (exit 2), in the words the dashboard gives', async (options) => {
    const before = await prisma.agent.count();
    const error = await fails(['agent', 'create', '--account', randomUUID(), '--name', 'Refused', ...options], 2);
    const flag = (name: string) => (options.includes(name) ? options[options.indexOf(name) + 1] : undefined);
    expect(error).toBe(
      newAgentProblem({
        maxAttempts: flag('--max-attempts'),
        retryOn: flag('--retry-on'),
        retryWaits: flag('--retry-waits'),
        voicemail: flag('--voicemail'),
        voicemailMessage: flag('--voicemail-message'),
        windowTimezone: flag('--window-timezone'),
      }),
    );
    expect(error).toMatch(/\S/);
    expect(await prisma.agent.count()).toBe(before);
  });
});

describe('callctl agent update', () => {
  it('changes only the options given, and audits what changed as the operator', async () => {
    const id = await newAgent(
      '--phone',
      '+14155550100',
      '--timezone',
      'America/New_York',
      '--window',
      'mon-fri 09:00-17:00',
    );
    const out = await ok(['agent', 'update', id, '--max-attempts', '3', '--retry-on', 'busy,no_answer']);
    expect(out).toMatchObject({ id, changed: ['max_attempts', 'retry_on'] });
    expect(out.agent).toMatchObject({
      name: 'Front desk',
      phone_number: '+14155550100',
      timezone: 'America/New_York',
      calling_windows: ['mon-fri 09:00-17:00'],
      max_attempts: 3,
      retry_on: ['busy', 'no_answer'],
      retry_waits_minutes: [30, 120, 1440],
    });
    expect(await agentRow(id)).toMatchObject({
      name: 'Front desk',
      phoneNumber: '+14155550100',
      timezone: 'America/New_York',
      callingWindows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' }],
      outsideWindowPolicy: 'queue',
      maxAttempts: 3,
      retryOn: ['busy', 'no_answer'],
      voicemail: 'off',
    });
    const audit = await lastAudit(id);
    expect(audit).toMatchObject({ action: 'agent_changed', actorKind: 'operator', accountId });
    expect(audit!.detail).toEqual({ agent_id: id, max_attempts: 3, retry_on: ['busy', 'no_answer'] });

    // The fields create takes, each changed alone.
    const fields = await ok([
      'agent',
      'update',
      id,
      '--name',
      'Night desk',
      '--phone',
      '+14155550199',
      '--timezone',
      'Europe/Berlin',
      '--window',
      'sat,sun 22:00-02:00',
      '--window',
      'mon 08:00-12:00',
      '--outside-window',
      'reject',
      '--window-timezone',
      'recipient',
    ]);
    expect(fields.changed).toEqual([
      'name',
      'phone_number',
      'timezone',
      'calling_windows',
      'outside_window_policy',
      'window_timezone',
    ]);
    expect(await agentRow(id)).toMatchObject({
      name: 'Night desk',
      phoneNumber: '+14155550199',
      timezone: 'Europe/Berlin',
      callingWindows: [
        { days: [6, 7], start: '22:00', end: '02:00' },
        { days: [1], start: '08:00', end: '12:00' },
      ],
      outsideWindowPolicy: 'reject',
      windowTimezone: 'recipient',
      maxAttempts: 3,
    });

    // none: no number, no window (always open): the settings only a window gives meaning to return to queue and
    // the agent's zone.
    expect((await ok(['agent', 'update', id, '--phone', 'none', '--window', 'none'])).changed).toEqual([
      'phone_number',
      'calling_windows',
      'outside_window_policy',
      'window_timezone',
    ]);
    expect(await agentRow(id)).toMatchObject({
      phoneNumber: null,
      callingWindows: [],
      outsideWindowPolicy: 'queue',
      windowTimezone: 'agent',
    });
  });

  it('sets and removes the voicemail message, and refuses (exit 1) what contradicts the stored settings', async () => {
    const id = await newAgent('--phone', '+14155550100');
    await ok(['agent', 'update', id, '--voicemail', 'leave_message', '--voicemail-message', 'Hi {{name}}']);
    await ok(['agent', 'update', id, '--max-attempts', '2', '--retry-on', 'voicemail', '--retry-waits', '5']);
    const stored = await agentRow(id);
    expect(stored).toMatchObject({
      voicemail: 'leave_message',
      voicemailMessage: 'Hi {{name}}',
      maxAttempts: 2,
      retryOn: ['voicemail'],
      retryWaitsMinutes: [5],
    });
    const audits = await prisma.auditEntry.count();
    const storedSettings = {
      maxAttempts: 2,
      retryOn: ['voicemail'],
      voicemail: 'leave_message',
      voicemailMessage: 'Hi {{name}}',
      hasWindow: false,
      outsideWindow: 'queue',
      windowTimezone: 'agent',
    } as const;
    for (const [options, settings] of [
      [['--voicemail-message', ''], { voicemailMessage: null }],
      [['--voicemail', 'off'], { voicemail: 'off' }],
      [['--retry-on', 'none'], { retryOn: [] }],
    ] as const) {
      const error = await fails(['agent', 'update', id, ...options], 1);
      expect(error).toBe(reachSettingsProblem({ ...storedSettings, ...settings }));
    }
    expect(await agentRow(id)).toEqual(stored);
    expect(await prisma.auditEntry.count()).toBe(audits);

    // Both at once agree: hang up, and the message goes.
    await ok(['agent', 'update', id, '--voicemail', 'hang_up', '--voicemail-message', '']);
    expect(await agentRow(id)).toMatchObject({ voicemail: 'hang_up', voicemailMessage: null });
  });

  it('changes nothing and records nothing when the options repeat the stored values', async () => {
    const id = await newAgent('--max-attempts', '2', '--retry-on', 'busy');
    const audits = await prisma.auditEntry.count();
    const again = await callctl(url, ['agent', 'update', id, '--max-attempts', '2', '--retry-on', 'busy']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^changed: +\(none\)$/m);
    expect(again.stdout).toContain('Nothing changed: the agent already had these settings.');
    expect(await prisma.auditEntry.count()).toBe(audits);
    const changed = await callctl(url, ['agent', 'update', id, '--retry-waits', '45']);
    expect(changed.stdout).toMatch(/^changed: +retry_waits_minutes$/m);
    expect(changed.stdout).not.toContain('Nothing changed');
  });

  it.each([
    [[], /^Nothing to change: give at least one of --name, /],
    [['--window', 'none', '--window', 'mon-fri 09:00-17:00'], /^--window none \(always open\) cannot be given/],
    [['--account', randomUUID(), '--name', 'X'], /^Unknown flag --account for "agent update"$/],
  ])('%j is a usage error (exit 2)', async (options, message) => {
    expect(await fails(['agent', 'update', randomUUID(), ...options], 2)).toMatch(message);
  });

  it.each([
    [['--phone', '+1 415 555 0100'], { phone: '+1 415 555 0100' }],
    [['--timezone', 'Mars/Olympus'], { timezone: 'Mars/Olympus' }],
    [['--window', 'someday 09:00-17:00'], { windows: ['someday 09:00-17:00'] }],
    [['--outside-window', 'maybe'], { outsideWindow: 'maybe' }],
    [['--window-timezone', 'callee'], { windowTimezone: 'callee' }],
    [['--max-attempts', '9'], { maxAttempts: '9' }],
    [['--retry-on', 'rejected'], { retryOn: 'rejected' }],
    [['--retry-waits', '99999'], { retryWaits: '99999' }],
    [['--voicemail', 'maybe'], { voicemail: 'maybe' }],
    [['--voicemail-message', 'Ring\u0007'], { voicemailMessage: 'Ring\u0007' }],
  ])('refuses %j as create does (exit 2, the same words)', async (options, input) => {
    const error = await fails(['agent', 'update', randomUUID(), ...options], 2);
    expect(error).toBe(agentInputProblem(input));
    expect(error).toMatch(/\S/);
  });

  it('refuses an unknown agent and an unreadable name as create does (exit 1), changing nothing', async () => {
    expect(await fails(['agent', 'update', randomUUID(), '--max-attempts', '1'], 1)).toMatch(/^No agent /);
    expect(await fails(['agent', 'update', 'not-an-id', '--max-attempts', '1'], 1)).toBe('No agent not-an-id');
    const id = await newAgent();
    const stored = await agentRow(id);
    expect(await fails(['agent', 'update', id, '--name', '   '], 1)).toBe('An agent needs a name');
    expect(await fails(['agent', 'create', '--account', accountId, '--name', '   '], 1)).toBe('An agent needs a name');
    expect(await fails(['agent', 'update', id, '--name', 'abc\u202egnp.exe'], 1)).toMatch(/direction of the text/);
    expect(await agentRow(id)).toEqual(stored);
  });
});

/** A command line as a shell splits it (double quotes only: the examples use nothing else). */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

describe('callctl agent help', () => {
  it('documents every option, with examples that run as written', async () => {
    const help = await callctl(url, ['agent', 'update', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:');
    const group = (await callctl(url, ['agent', '--help'])).stdout;
    for (const command of AGENT_COMMANDS)
      for (const example of command.examples ?? []) expect(group).toContain(example);
    const json = await ok(['agent', 'update', '--help']);
    expect(json.examples).toEqual(AGENT_COMMANDS.find((c) => c.words[1] === 'update')!.examples);

    // The examples name the documentation's ids: here, a real account and the agent the first example makes.
    const [create, update] = ['create', 'update'].map((word) => AGENT_COMMANDS.find((c) => c.words[1] === word)!);
    let agentId = '';
    for (const example of create!.examples!) {
      const words = shellWords(example).slice(1);
      const out = await ok(words.map((w) => (w === '449368cd-29ab-43cc-bc14-a79411dea4bf' ? accountId : w)));
      agentId ||= out.id as string;
    }
    for (const example of update!.examples!) {
      const words = shellWords(example).slice(1);
      await ok(words.map((w) => (w === '1cdf1ffb-3133-4b0b-86b0-20eaddfa019f' ? agentId : w)));
    }
    expect(await agentRow(agentId)).toMatchObject({
      name: 'Front desk (night)',
      phoneNumber: null,
      callingWindows: [],
      maxAttempts: 1,
      // One attempt: nothing left to retry on; no window: the callee's hours went with it.
      retryOn: [],
      voicemail: 'hang_up',
      windowTimezone: 'agent',
    });
  });
});
