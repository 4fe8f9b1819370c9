// `callctl calls show` and the voice-agent runtime's result (issue 47, point 6): for people its outcome, opt-out,
// summary, data as the runtime wrote it, the transcript as a conversation and its links, with nothing a runtime or a
// callee said able to move the terminal's cursor or reverse its line; in --json the published result exactly
// (its data's key order kept) and whether the terminal event carried it; "none" while the runtime reported nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { callctl } from '../helpers/cli.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceResult, insertCalls } from '../helpers/seed.js';

const DATA = '{"z":"last","10":1,"2":true,"note":null}';
let app: App;
let databaseUrl: string;
let tenant: Tenant;
let withResult: string;
let without: string;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp({ clock: () => new Date('2058-03-11T12:00:00Z') }));
  tenant = await createTenant(app.storage);
  const ids = await insertCalls(prismaOf(app), {
    accountId: tenant.accountId,
    agentId: tenant.agentId,
    count: 2,
    createdAt: new Date('2058-03-11T11:00:00Z'),
  });
  [withResult, without] = [ids[0]!, ids[1]!];
  await forceResult(
    prismaOf(app),
    withResult,
    {
      outcome: 'appointment_booked',
      summary: 'Booked for Tuesday.\nThe callee \u001b[31mwas\u001b[0m happy \u202Eevil',
      dataJson: DATA,
      transcript: [
        { speaker: 'agent', text: 'Hello', at: '2058-03-11T11:00:05.000Z' },
        { speaker: 'callee', text: 'Hi\rthere', at: '2058-03-11T11:01:17.000Z' },
      ],
      recording_url: 'https://runtime.example/r/1',
      opt_out: true,
    },
    { inEvent: false, receivedAt: new Date('2058-03-11T11:05:00Z') },
  );
});

describe('calls show with a result', () => {
  it('prints it for people: outcome, summary, data as written, the conversation, links; escapes what would move the terminal', async () => {
    const { code, stdout } = await callctl(databaseUrl, ['calls', 'show', withResult], {}, app.now);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const first = lines.findIndex((l) => l.startsWith('result (from the agent'));
    expect(lines[first]).toBe(
      "result (from the agent's runtime, received 2058-03-11T11:05:00.000Z, after the terminal event was sent):",
    );
    expect(lines.slice(first + 1, first + 19).map((l) => l.replace(/: +/, ': '))).toEqual([
      '  outcome: appointment_booked',
      '  opt out: yes (asked not to be called again)',
      '  summary:',
      '    Booked for Tuesday.',
      '    The callee \\u001b[31mwas\\u001b[0m happy \\u202eevil',
      '  data (JSON, as given):',
      '    "z": "last"',
      '    "10": 1',
      '    "2": true',
      '    "note": null',
      '  transcript:',
      '    [0:00] agent: Hello',
      '    [1:12] callee: Hi\\u000dthere',
      '  transcript url: -',
      '  recording url: https://runtime.example/r/1',
      'events:',
      expect.stringMatching(/occurred at/) as string,
      expect.any(String) as string,
    ]);
    expect(stdout).not.toContain('\u001b');
    expect(stdout).not.toContain('\u202E');
  });

  it('gives the published result in --json, its data in the order written', async () => {
    const { code, stdout } = await callctl(databaseUrl, ['calls', 'show', withResult, '--json'], {}, app.now);
    expect(code).toBe(0);
    expect(stdout).toContain(`"data":${DATA}`);
    const shown = JSON.parse(stdout) as { call: { result: Record<string, unknown>; result_in_event: boolean } };
    expect(shown.call.result).toMatchObject({ outcome: 'appointment_booked', opt_out: true, transcript_url: null });
    expect(shown.call.result_in_event).toBe(false);
  });

  it('says none was reported while the runtime has said nothing', async () => {
    const people = await callctl(databaseUrl, ['calls', 'show', without], {}, app.now);
    expect(people.stdout).toContain('result: (none reported by the runtime)');
    const shown = (await callctl(databaseUrl, ['calls', 'show', without, '--json'], {}, app.now)).json<unknown>();
    expect(shown).toMatchObject({ call: { result: null, result_in_event: null } });
  });
});
