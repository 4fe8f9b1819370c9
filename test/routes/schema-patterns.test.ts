// Every pattern of schemas/, tried on the inputs that make a backtracking regex slow (long runs of one character,
// surrogate pairs, lone surrogates, with a character before and a last one that fails), at the longest a request can
// bring to it: none may hold the loop. Then the two that did, end to end: a trigger with 50 metadata keys of 41 emoji
// each (exponential), and a Calls filter of 16 KiB of blanks (quadratic): docs/performance.md#patterns-in-linear-time.
import fs from 'node:fs';
import path from 'node:path';
import { Kind, type TSchema } from '@sinclair/typebox';
import { beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT, type App } from '../../src/app.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { blankOr } from '../../schemas/dashboard/forms.js';
import { UNLIMITED } from '../reliability/helpers.js';
import { buildTestApp } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from '../dashboard/helpers.js';
import { LOOP_STALL_LIMIT_MS, mainThreadCpu, processCpu, watchLoop } from '../dashboard/loop-watch.js';

interface Pattern {
  source: string;
  /** As the check compiles it: TypeBox's own string and record-key checks without flags, Text (schemas/text.ts) 'u'. */
  flags: '' | 'u';
  /** The longest input that reaches it, in UTF-16 units. */
  longest: number;
  where: string;
}

/**
 * The patterns of every schema schemas/ exports. A Text is checked for its length first, so at most twice its
 * maxLength in units reaches its pattern; TypeBox tests its own patterns whatever the length (its error list checks
 * every rule), and record keys have no length check before theirs: a whole body's worth. A body can be larger than
 * 32 KiB (the agent runtime's result), but the runs stop there: a quadratic pattern already takes seconds on them and
 * an exponential one on 41 units. A pattern found in several schemas is tried at the longest of them.
 */
async function schemaPatterns(): Promise<Pattern[]> {
  const found = new Map<string, Pattern>();
  const seen = new Set<object>();
  const add = (pattern: Pattern) => {
    const key = `${pattern.flags}/${pattern.source}`;
    if ((found.get(key)?.longest ?? -1) < pattern.longest) found.set(key, pattern);
  };
  const visit = (schema: unknown, where: string) => {
    if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    const node = schema as TSchema;
    if (typeof node.pattern === 'string') {
      const text = node[Kind] === 'Text';
      const longest = text && typeof node.maxLength === 'number' ? 2 * node.maxLength : BODY_LIMIT;
      add({ source: node.pattern, flags: text ? 'u' : '', longest, where });
    }
    for (const key of Object.keys((node.patternProperties as object | undefined) ?? {}))
      add({ source: key, flags: '', longest: BODY_LIMIT, where: `${where} (keys)` });
    for (const value of Object.values(node)) visit(value, where);
  };
  const dir = path.join(PROJECT_ROOT, 'schemas');
  const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  for (const file of files) {
    const module = (await import(path.join(dir, file))) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) visit(value, `${file}: ${name}`);
  }
  return [...found.values()];
}

/**
 * Runs of one unit (a character, a pair, a lone surrogate, two characters), short and as long as allowed, after a
 * character or none and before a last one that may fail.
 */
function* hostileInputs(longest: number): Generator<string> {
  const units = [' ', '\t', 'a', 'Z', '0', '-', '_', '.', '@', ':', '+', '/', 'é', '😀', '\ud83d', '\udc00'];
  const pairs = ['a.', 'a-', '0-', '0:', 'a@', '1.', ' a', 'a '];
  const endings = ['', '!', '\u0000', ' ', ',', '\ud83d', '😀'];
  for (const unit of [...units, ...pairs])
    for (const count of [41, 257, Infinity]) {
      const run = unit.repeat(Math.min(count, Math.floor((longest - 2) / unit.length)));
      for (const before of ['', 'a']) for (const ending of endings) yield before + run + ending;
    }
}

/** The main thread's CPU time (loop-watch.ts), or the process's where the platform cannot tell it apart. */
const threadCpu = mainThreadCpu() ?? processCpu;

/** CPU milliseconds `work` took on this thread (a regex runs synchronously). */
function cpuMs(work: () => void): number {
  const before = threadCpu();
  work();
  return threadCpu() - before;
}

describe('the schemas’ patterns on hostile input', () => {
  it('match in time linear in the input: no input a request can bring holds the loop', async () => {
    const patterns = await schemaPatterns();
    // The trigger's and the result's key rule, the dashboard's blank-or filters, dates, e-mail, ids, URLs...
    expect(patterns.length).toBeGreaterThan(30);
    const slow: string[] = [];
    for (const pattern of patterns) {
      const regex = new RegExp(pattern.source, pattern.flags);
      for (const input of hostileInputs(pattern.longest)) {
        const ms = cpuMs(() => regex.test(input));
        if (ms < LOOP_STALL_LIMIT_MS) continue;
        slow.push(
          `${pattern.where}: /${pattern.source}/${pattern.flags} took ${ms.toFixed(0)} ms on ${input.length} units`,
        );
        break; // one input says it; the others would take as long
      }
    }
    expect(slow).toEqual([]);
  });

  it('a blank-or pattern says what the plain form says: blanks, the value, blanks', () => {
    const regex = new RegExp(blankOr('\\d{4}-\\d{2}'));
    for (const accepted of ['', '   ', '2056-01', ' 2056-01 ', '\t2056-01\n'])
      expect(regex.test(accepted), accepted).toBe(true);
    for (const refused of ['2056', ' 2056-01 x', 'x', '2056-01 2056-01'])
      expect(regex.test(refused), refused).toBe(false);
  });
});

describe('hostile input end to end, while another tenant triggers', () => {
  let app: App;
  let attacker: Tenant;
  let other: Tenant;
  let visitor: Visitor;

  beforeAll(async () => {
    ({ app } = await buildTestApp({ env: { ...DASHBOARD_ENV, ...UNLIMITED } }));
    attacker = await createTenant(app.storage);
    other = await createTenant(app.storage);
    await createUserWithPassword(app.storage, attacker.accountId, 'hostile@patterns.example');
    visitor = new Visitor(app);
    expect((await visitor.signIn('hostile@patterns.example')).status).toBe(303);
  });

  it('50 metadata keys of 41 emoji: refused by the key rule, the loop never held', async () => {
    const metadata = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${'😀'.repeat(40)}${String(i).padStart(2, '0')}`, i]),
    );
    expect(Object.keys(metadata)).toHaveLength(50);
    const watched = await watchLoop(app, other.key, () =>
      trigger(app, attacker.key, { phone_number: '+14155552671', metadata }, { 'x-forwarded-proto': 'https' }),
    );
    expect(watched.result.statusCode).toBe(400);
    expect(watched.result.json()).toEqual({ success: false, error: 'metadata keys must be 1 to 40 characters' });
    expect(watched.refusals).toEqual([]);
    expect(watched.heldMs).toBeLessThan(LOOP_STALL_LIMIT_MS);
  });

  it('a Calls filter of 16 KiB of blanks and a letter: the page names the filter, the loop never held', async () => {
    const status = `${' '.repeat(16 * 1024)}x`;
    const watched = await watchLoop(app, other.key, () =>
      visitor.get(`/dashboard/calls?status=${encodeURIComponent(status)}`),
    );
    expect(watched.result.status).toBe(400);
    expect(watched.refusals).toEqual([]);
    expect(watched.heldMs).toBeLessThan(LOOP_STALL_LIMIT_MS);
  });
});
