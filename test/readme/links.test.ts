// Every link from the README, docs/ and bench/README.md to a file or a heading of this repository resolves, so that a
// section moved between pages cannot leave a link behind.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors } from './anchors.js';

const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  'bench/README.md',
  ...fs
    .readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The page's text without fenced code blocks and inline code, where brackets are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, 'code');
}

/** Link targets of `[text](target)` and `![alt](target)`, without a title. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

function isLocal(target: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(target);
}

describe('documentation links', () => {
  it('finds the pages and their links', () => {
    expect(PAGES).toContain('docs/api.md');
    const all = PAGES.flatMap((page) => links(fs.readFileSync(page, 'utf8')).filter(isLocal));
    expect(all.length).toBeGreaterThan(20);
  });

  it('computes GitHub anchors', () => {
    const slugs = anchors("# A\n## `POST /calls/trigger`\n## Operator commands (`callctl`)\n## Fifth: (d), (f)'s\n# A");
    expect([...slugs]).toEqual(['a', 'post-callstrigger', 'operator-commands-callctl', 'fifth-d-fs', 'a-1']);
  });

  it.each(PAGES)('every local link of %s resolves to a file and, with #, to one of its headings', (page) => {
    const broken: string[] = [];
    for (const target of links(fs.readFileSync(page, 'utf8')).filter(isLocal)) {
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? page : path.join(path.dirname(page), decodeURIComponent(file));
      if (!fs.existsSync(resolved)) {
        broken.push(`${target}: no file ${resolved}`);
        continue;
      }
      if (anchor !== undefined && !anchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
        broken.push(`${target}: no heading #${anchor} in ${resolved}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
