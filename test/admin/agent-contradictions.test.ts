// callctl agent create and update refuse settings that cannot apply, as the dashboard does (issue 45, point 16): two
// options that contradict each other are a usage error (exit 2) before the database is read; an option that
// contradicts the stored settings is refused (exit 1); a stored setting an option makes inapplicable returns to its
// neutral value (--window none: queue, the agent's zone; --max-attempts 1: no outcome; --voicemail hang_up: no
// message); a contradiction stored before the rules does not block an edit of other fields.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { createTenant } from '../helpers/fixtures.js';
import { json } from '../helpers/json.js';
import { forceAgent } from '../helpers/seed.js';

let app: App;
let url: string;
let accountId: string;

beforeAll(async () => {
  ({ app, databaseUrl: url } = await buildTestApp());
  ({ accountId } = await createTenant(app.storage));
});

async function ok(args: string[]) {
  const result = await callctl(url, [...args, '--json']);
  expect(result.stderr, args.join(' ')).toBe('');
  return result.json();
}

async function fails(args: string[], code: number): Promise<string> {
  const result = await callctl(url, [...args, '--json']);
  expect(result.code, args.join(' ')).toBe(code);
  return json<CliError>(result.stderr).error;
}

const create = (...options: string[]) => ['agent', 'create', '--account', accountId, '--name', 'Desk', ...options];
const row = (id: string) => prismaOf(app).agent.findUniqueOrThrow({ where: { id } });

describe('callctl agent create', () => {
  it('refuses two options that contradict each other as a usage error, in the words of the rule', async () => {
    const cases: [string[], RegExp][] = [
      [['--max-attempts', '1', '--retry-on', 'busy'], /^Retrying on busy needs more than one attempt/],
      [['--retry-on', 'no_answer'], /^Retrying on no_answer needs more than one attempt/],
      [['--outside-window', 'reject'], /^Rejecting triggers outside the calling window needs a calling window/],
      [['--window-timezone', 'recipient'], /^Reading the calling window in the callee's time zone needs a calling/],
      [['--voicemail', 'hang_up', '--voicemail-message', 'Hi'], /^A voicemail message is only left when/],
      [['--voicemail-message', 'Hi'], /^A voicemail message is only left when/],
    ];
    const before = await prismaOf(app).agent.count();
    for (const [options, words] of cases) expect(await fails(create(...options), 2), options.join(' ')).toMatch(words);
    expect(await prismaOf(app).agent.count()).toBe(before);
  });

  it('takes them with what they need', async () => {
    const out = await ok(
      create('--window', 'mon-fri 09:00-17:00', '--outside-window', 'reject', '--window-timezone', 'recipient'),
    );
    expect(await row(out.id as string)).toMatchObject({ outsideWindowPolicy: 'reject', windowTimezone: 'recipient' });
    // Waits with one attempt are no contradiction: kept for when the attempts are raised.
    const waits = await ok(create('--retry-waits', '45'));
    expect(await row(waits.id as string)).toMatchObject({ maxAttempts: 1, retryWaitsMinutes: [45] });
  });
});

describe('callctl agent update', () => {
  async function everythingOn() {
    const out = await ok(
      create(
        '--window',
        'mon-fri 09:00-17:00',
        '--outside-window',
        'reject',
        '--window-timezone',
        'recipient',
        '--max-attempts',
        '3',
        '--retry-on',
        'busy',
        '--voicemail',
        'leave_message',
        '--voicemail-message',
        'Hello {{name}}',
      ),
    );
    return out.id as string;
  }

  it('returns what an option makes inapplicable to its neutral value, and says it changed', async () => {
    const id = await everythingOn();
    expect((await ok(['agent', 'update', id, '--window', 'none'])).changed).toEqual([
      'calling_windows',
      'outside_window_policy',
      'window_timezone',
    ]);
    expect((await ok(['agent', 'update', id, '--max-attempts', '1'])).changed).toEqual(['max_attempts', 'retry_on']);
    expect((await ok(['agent', 'update', id, '--voicemail', 'hang_up'])).changed).toEqual([
      'voicemail',
      'voicemail_message',
    ]);
    expect(await row(id)).toMatchObject({
      outsideWindowPolicy: 'queue',
      windowTimezone: 'agent',
      maxAttempts: 1,
      retryOn: [],
      voicemail: 'hang_up',
      voicemailMessage: null,
    });
  });

  it('refuses an option that cannot apply to the stored settings (exit 1), or that contradicts another (exit 2)', async () => {
    const id = await ok(create()).then((out) => out.id as string);
    const stored = await row(id);
    expect(await fails(['agent', 'update', id, '--outside-window', 'reject'], 1)).toMatch(/needs a calling window/);
    expect(await fails(['agent', 'update', id, '--window-timezone', 'recipient'], 1)).toMatch(/needs a calling window/);
    expect(await fails(['agent', 'update', id, '--retry-on', 'busy'], 1)).toMatch(/needs more than one attempt/);
    expect(await fails(['agent', 'update', id, '--voicemail-message', 'Hi'], 1)).toMatch(/only left when/);
    expect(await fails(['agent', 'update', id, '--window', 'none', '--outside-window', 'reject'], 2)).toMatch(
      /needs a calling window/,
    );
    expect(await row(id)).toEqual(stored);
  });

  it('a contradiction stored before the rules does not block an edit of other fields', async () => {
    const id = await ok(create()).then((out) => out.id as string);
    await forceAgent(prismaOf(app), id, {
      outsideWindowPolicy: 'reject',
      retryOn: ['busy'],
      voicemailMessage: 'Old message',
    });
    expect((await ok(['agent', 'update', id, '--name', 'Renamed'])).changed).toEqual(['name']);
    expect(await row(id)).toMatchObject({ name: 'Renamed', outsideWindowPolicy: 'reject', retryOn: ['busy'] });
  });
});
