// Names people can read (issue 21, point 7): a client, agent or agency name that is only invisible characters, or that
// holds a control character or a bidirectional override, embedding or isolate, is refused in plain words, the same by
// the dashboard and by callctl (both go through src/admin), and nothing is stored or audited.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { readableNameProblem } from '../../schemas/text.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { json } from '../helpers/json.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor, html } from './helpers.js';

let app: App;
let databaseUrl: string;
let agencyId: string;
let owner: Visitor;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp({ env: DASHBOARD_ENV }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Readable agency' }));
  await createUserWithPassword(app.storage, agencyId, 'owner@readable.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@readable.example')).status).toBe(303);
});

const INVISIBLE = '(it has only spaces or invisible characters)';
const DIRECTION = 'change the direction of the text';
const CONTROL = 'control characters';

/** Unreadable names and the words that say why. */
const UNREADABLE: [string, string][] = [
  ['\u200b\u200b', INVISIBLE], // two zero-width spaces: the invisible client
  ['\u200d\ufeff\u2060', INVISIBLE],
  ['\u3164', INVISIBLE], // Hangul filler
  ['\u00ad\u034f', INVISIBLE], // soft hyphen, combining grapheme joiner
  ['\u2800', INVISIBLE], // Braille blank
  ['\u202f\u200b\u3000', INVISIBLE],
  ['abc\u202egnp.exe', DIRECTION], // shows as abcexe.png
  ...['\u202a', '\u202b', '\u202c', '\u202d', '\u2066', '\u2067', '\u2068', '\u2069'].map((c): [string, string] => [
    `Acme ${c}Inc`,
    DIRECTION,
  ]),
  ['Acme\nInc', CONTROL],
  ['Acme\u0007', CONTROL],
  ['Acme\u009bInc', CONTROL],
];

/** Names that are fine: right-to-left text with its marks, joiners inside emoji, combining accents. */
const READABLE = ['שלום \u200fבע"מ', 'Family 👩\u200d👩\u200d👧', 'Cafe\u0301', 'Zoë & Co.', 'A\u200bB'];

describe('the rule', () => {
  it('names what is wrong, and lets readable names through', () => {
    for (const [name, words] of UNREADABLE) expect(readableNameProblem(name), JSON.stringify(name)).toContain(words);
    for (const name of READABLE) expect(readableNameProblem(name), name).toBeNull();
    // Only a direct call can carry a lone surrogate (a form sends U+FFFD instead).
    expect(readableNameProblem('Acme\ud800')).toContain(CONTROL);
  });
});

describe('the dashboard', () => {
  it('refuses such a client name with the reason and creates nothing', async () => {
    const accounts = await prismaOf(app).account.count();
    for (const [name, words] of UNREADABLE) {
      const res = await owner.submit('/dashboard/clients', '/dashboard/clients', { name });
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
      expect(res.body).toContain(
        `<p class="field-error" id="f-name-error" role="alert">${html("A client's name must")}`,
      );
      expect(res.body).toContain(html(words));
    }
    expect(await prismaOf(app).account.count()).toBe(accounts);
    expect(await prismaOf(app).auditEntry.count({ where: { action: 'client_created' } })).toBe(0);
    expect((await owner.submit('/dashboard/clients', '/dashboard/clients', { name: READABLE[0]! })).status).toBe(303);
  });

  it('refuses such an agent name on create and on edit, and stores nothing', async () => {
    const form = (name: string) => ({ name, phone: '', timezone: 'UTC', policy: 'queue' });
    const agents = await prismaOf(app).agent.count();
    for (const [name, words] of UNREADABLE) {
      const res = await owner.submit('/dashboard/agents/new', '/dashboard/agents', form(name));
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
      expect(res.body).toContain(`<p class="field-error" id="f-name-error">${html('The name must')}`);
      expect(res.body).toContain(html(words));
    }
    expect(await prismaOf(app).agent.count()).toBe(agents);

    expect((await owner.submit('/dashboard/agents/new', '/dashboard/agents', form('Front desk'))).status).toBe(303);
    const agent = await prismaOf(app).agent.findFirstOrThrow({ where: { name: 'Front desk' } });
    const edited = await owner.submit(
      `/dashboard/agents/${agent.id}`,
      `/dashboard/agents/${agent.id}`,
      form('abc\u202egnp.exe'),
    );
    expect(edited.status).toBe(400);
    expect(edited.body).toContain(html(DIRECTION));
    expect((await prismaOf(app).agent.findUniqueOrThrow({ where: { id: agent.id } })).name).toBe('Front desk');
  });
});

describe('callctl', () => {
  it('refuses the same names for agencies (create and setup), clients and agents with the same words', async () => {
    const accounts = await prismaOf(app).account.count();
    const agents = await prismaOf(app).agent.count();
    for (const [name, words] of [UNREADABLE[0]!, UNREADABLE[6]!]) {
      const runs = [
        [await callctl(databaseUrl, ['agency', 'create', '--name', name, '--json']), "An agency's name"],
        [
          await callctl(databaseUrl, ['setup', '--agency-name', name, '--email', 'first@example.com', '--json']),
          "An agency's name",
        ],
        [
          await callctl(databaseUrl, ['client', 'create', '--agency', agencyId, '--name', name, '--json']),
          "A client's name",
        ],
        [
          await callctl(databaseUrl, ['agent', 'create', '--account', agencyId, '--name', name, '--json']),
          "An agent's name",
        ],
      ] as const;
      for (const [run, subject] of runs) {
        expect(run.code, run.stderr).not.toBe(0);
        expect(json<CliError>(run.stderr).error).toBe(`${subject} ${readableNameProblem(name)}`);
        expect(run.stderr).toContain(words);
      }
    }
    expect(await prismaOf(app).account.count()).toBe(accounts);
    expect(await prismaOf(app).agent.count()).toBe(agents);
  });
});
