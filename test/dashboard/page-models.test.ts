// Pages and their templates cannot drift: every `it.*` a template reads (with the partials it includes) is a field of
// its page model (src/views/pages/<page>.ts, mapped in src/views/page-models.ts) and every field of the model is read; and `reply.page` with a
// model that does not match its template does not compile (the @ts-expect-error lines below, checked by
// `npm run typecheck`).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import type {} from '../../plugins/dashboard/pages.js';
import { VIEWS_DIR } from '../../src/paths.js';
import {
  LAYOUT_FIELDS,
  LOCALS_FIELDS,
  PAGE_FIELDS,
  type PageData,
  type PageName,
} from '../../src/views/page-models.js';

const PAGES_DIR = path.join(VIEWS_DIR, 'pages');
const source = (name: string) => readFileSync(path.join(PAGES_DIR, `${name}.eta`), 'utf8');

/** The top-level fields of `it` a template reads, with those of the partials it includes. */
function fieldsRead(name: string, seen = new Set<string>()): Set<string> {
  seen.add(name);
  const text = source(name);
  const fields = new Set([...text.matchAll(/\bit\.([A-Za-z_$][\w$]*)/g)].map((m) => m[1]!));
  for (const [, partial] of text.matchAll(/\binclude\(\s*['"]\.\/([\w-]+)['"]/g)) {
    if (!seen.has(partial!)) for (const field of fieldsRead(partial!, seen)) fields.add(field);
  }
  return fields;
}

const templates = readdirSync(PAGES_DIR)
  .filter((file) => file.endsWith('.eta'))
  .map((file) => file.slice(0, -'.eta'.length));
/** The templates rendered by `reply.page`: those in the layout (partials are included by them). */
const pages = templates.filter((name) => /\blayout\(\s*['"]\.\/layout['"]/.test(source(name)));
const frame = new Set<string>([...LAYOUT_FIELDS, ...LOCALS_FIELDS]);

describe('page models', () => {
  it('has a model for every page template, and a template for every model', () => {
    expect([...pages].sort()).toEqual(Object.keys(PAGE_FIELDS).sort());
  });

  it.each(pages)('%s: the model lists exactly the fields its template reads', (name) => {
    const read = [...fieldsRead(name)].filter((field) => !frame.has(field)).sort();
    expect(read).toEqual([...PAGE_FIELDS[name as PageName]].sort());
  });

  it('the layout reads only the layout model', () => {
    expect([...fieldsRead('layout')].filter((field) => !frame.has(field))).toEqual([]);
  });
});

/** Never called: what it holds is checked by the compiler. */
export function compileChecks(reply: FastifyReply, calls: PageData<'calls'>) {
  reply.page('error', { title: 'Not found', message: 'There is no such page.' });
  reply.page('calls', calls);
  // @ts-expect-error a field its template reads is missing
  reply.page('error', { title: 'Not found' });
  // @ts-expect-error a field of the wrong type
  reply.page('error', { title: 'Not found', message: 404 });
  // @ts-expect-error a field its template does not read
  reply.page('error', { title: 'Not found', message: 'There is no such page.', problem: null });
  // @ts-expect-error another template's model
  reply.page('sign-in', { title: 'Not found', message: 'There is no such page.' });
  // @ts-expect-error the Calls page without its "Clear filters" link
  reply.page('calls', { ...calls, clearHref: undefined });
  // @ts-expect-error no such template
  reply.page('no-such-page', { title: 'Nothing' });
  // @ts-expect-error every page has a title
  reply.page('error', { message: 'There is no such page.' });
}
