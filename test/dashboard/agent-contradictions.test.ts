// The agent form refuses settings that cannot apply (issue 45, point 16), each next to its field: retry outcomes with
// one attempt, a voicemail message without "Leave a message", "Reject" or the callee's hours without a calling
// window. A field the page's script left out because it cannot apply (a disabled field is not sent) returns to its
// neutral value on save. Waits with one attempt are no contradiction: they always have a value, kept for later.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import { createAgent } from '../../src/admin/agents.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

let app: App;
let owner: Visitor;
let agencyId: string;

const BASE: [string, string][] = [
  ['name', 'Contradiction'],
  ['phone', '+14155550100'],
  ['timezone', 'UTC'],
];
const WINDOW: [string, string][] = [
  ['window_day', '0:mon'],
  ['window_from', '09:00'],
  ['window_to', '17:00'],
];
const NO_WINDOW: [string, string][] = [
  ['window_from', ''],
  ['window_to', ''],
];

async function post(action: string, page: string, pairs: [string, string][]) {
  expect((await owner.get(page)).status).toBe(200);
  return owner.request('POST', action, [['_csrf', owner.lastCsrf ?? ''], ...pairs] as unknown as Record<
    string,
    string
  >);
}
const create = (pairs: [string, string][]) => post('/dashboard/agents', '/dashboard/agents/new', pairs);

/** The field errors of a page, by field id. */
function fieldErrors(body: string): Record<string, string> {
  return Object.fromEntries(
    [...body.matchAll(/<p class="field-error" id="f-([\w-]+)-error">([^<]*)<\/p>/g)].map((m) => [m[1]!, m[2]!]),
  );
}

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Contradictions agency' }));
  await createUserWithPassword(app.storage, agencyId, 'owner@contradictions.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@contradictions.example')).status).toBe(303);
});

describe('settings that cannot apply', () => {
  it('are refused next to their field, all at once, and nothing is stored', async () => {
    const before = await prismaOf(app).agent.count();
    const res = await create([
      ...BASE,
      ...NO_WINDOW,
      ['policy', 'reject'],
      ['window_timezone', 'recipient'],
      ['max_attempts', '1'],
      ['retry_on', 'busy'],
      ['retry_waits_minutes', '30, 120, 1440'],
      ['voicemail', 'hang_up'],
      ['voicemail_message', 'Hello {{name}}'],
    ]);
    expect(res.status).toBe(400);
    expect(fieldErrors(res.body)).toEqual({
      retry_on: html('With one attempt there is nothing to retry: choose 2 or more attempts in all, or untick these.'),
      voicemail_message: html(
        'A message is left only when "Leave a message" is chosen above: choose it, or clear the message.',
      ),
      policy: html(
        'Without a calling window the agent is always open, so no trigger is ever outside it: add a window above, ' +
          'or choose Queue.',
      ),
      window_timezone: html(
        "Without a calling window there are no hours to read in anyone's time zone: add a window above, or choose " +
          "the agent's time zone.",
      ),
    });
    // Each field says so to assistive technology too, and keeps what was chosen.
    expect(res.body).toContain('<fieldset id="f-policy" data-needs-window aria-invalid="true"');
    expect(res.body).toContain('<input type="radio" name="policy" value="reject" checked>');
    expect(await prismaOf(app).agent.count()).toBe(before);
  });

  it('each alone is refused; with what it needs, it is saved', async () => {
    const cases: { bad: [string, string][]; field: string; fixed: [string, string][] }[] = [
      {
        bad: [...NO_WINDOW, ['policy', 'reject']],
        field: 'policy',
        fixed: [...WINDOW, ['policy', 'reject']],
      },
      {
        bad: [...NO_WINDOW, ['policy', 'queue'], ['window_timezone', 'recipient']],
        field: 'window_timezone',
        fixed: [...WINDOW, ['policy', 'queue'], ['window_timezone', 'recipient']],
      },
      {
        bad: [
          ['policy', 'queue'],
          ['max_attempts', '1'],
          ['retry_on', 'no_answer'],
        ],
        field: 'retry_on',
        fixed: [
          ['policy', 'queue'],
          ['max_attempts', '2'],
          ['retry_on', 'no_answer'],
        ],
      },
      {
        bad: [
          ['policy', 'queue'],
          ['voicemail', 'off'],
          ['voicemail_message', 'Hi'],
        ],
        field: 'voicemail_message',
        fixed: [
          ['policy', 'queue'],
          ['voicemail', 'leave_message'],
          ['voicemail_message', 'Hi'],
        ],
      },
    ];
    for (const [i, { bad, field, fixed }] of cases.entries()) {
      const refused = await create([...BASE, ...bad]);
      expect(refused.status, field).toBe(400);
      expect(Object.keys(fieldErrors(refused.body)), field).toEqual([field]);
      const saved = await create([['name', `Agrees ${i}`], ...BASE.slice(1), ...fixed]);
      expect(saved.status, field).toBe(303);
    }
  });

  it('waits with one attempt are not refused: they are kept for when the attempts are raised', async () => {
    const res = await create([
      ['name', 'One try'],
      ...BASE.slice(1),
      ['policy', 'queue'],
      ['max_attempts', '1'],
      ['retry_waits_minutes', '45'],
    ]);
    expect(res.status).toBe(303);
    expect(await prismaOf(app).agent.findFirstOrThrow({ where: { name: 'One try' } })).toMatchObject({
      maxAttempts: 1,
      retryOn: [],
      retryWaitsMinutes: [45],
    });
  });

  it('a field left out because it cannot apply (as the script disables it) returns to its neutral value', async () => {
    const { id } = await createAgent(app.storage, {
      now: app.now(),
      accountId: agencyId,
      name: 'Everything on',
      phone: '+14155550101',
      windows: ['mon-fri 09:00-17:00'],
      outsideWindow: 'reject',
      windowTimezone: 'recipient',
      maxAttempts: 3,
      retryOn: 'busy,voicemail',
      retryWaits: '10, 20',
      voicemail: 'leave_message',
      voicemailMessage: 'Hello {{name}}',
    });
    // No window, one attempt, hang up: the page's script disabled the policy, whose hours, the outcomes, the waits
    // and the message, so the form sends none of them.
    const res = await post(`/dashboard/agents/${id}`, `/dashboard/agents/${id}`, [
      ['name', 'Everything on'],
      ['phone', '+14155550101'],
      ['timezone', 'UTC'],
      ...NO_WINDOW,
      ['max_attempts', '1'],
      ['voicemail', 'hang_up'],
    ]);
    expect(res.status, res.body).toBe(303);
    expect(await prismaOf(app).agent.findUniqueOrThrow({ where: { id } })).toMatchObject({
      callingWindows: [],
      outsideWindowPolicy: 'queue',
      windowTimezone: 'agent',
      maxAttempts: 1,
      retryOn: [],
      retryWaitsMinutes: [10, 20],
      voicemail: 'hang_up',
      voicemailMessage: null,
    });
  });

  it('the page loads the self-hosted script that disables them, and says when each applies', async () => {
    const { body } = await owner.get('/dashboard/agents/new');
    expect(body).toContain('<script src="/dashboard/assets/agent-form.js" defer></script>');
    expect(body).toMatch(
      /<div class="choices" role="group" id="f-retry_on" aria-label="Retry when" data-needs-attempts>/,
    );
    expect(body).toContain('<div class="field" data-needs-message>');
    expect(body).toContain('Only with a calling window: without one the agent is always open.');
    const script = await owner.get('/dashboard/assets/agent-form.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
  });
});
