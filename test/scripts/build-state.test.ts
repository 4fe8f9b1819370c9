// The staleness check behind `npm start` and callctl: dist/ counts as current exactly while no source it is built
// from (any top-level directory tsconfig.build.json includes, the configs, the Prisma schema) changed after the build.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  beginBuild,
  buildInputs,
  buildStatus,
  GENERATED_CLIENT,
  isStale,
  parseJsonc,
  STAMP,
  writeStamp,
} from '../../scripts/build-state.js';

const BUILT_AT = Date.parse('1998-01-01T12:00:00Z');
let root: string;

function write(relative: string, text = '', mtimeMs = BUILT_AT - 60_000) {
  const file = path.join(root, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  setMtime(relative, mtimeMs);
}
function setMtime(relative: string, mtimeMs: number) {
  fs.utimesSync(path.join(root, relative), mtimeMs / 1000, mtimeMs / 1000);
}
/** Directories get the time of their last entry change; pin them all before the build, as after a checkout. */
function settle(dir = root) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }))
    if (entry.isDirectory()) settle(path.join(dir, entry.name));
  fs.utimesSync(dir, (BUILT_AT - 60_000) / 1000, (BUILT_AT - 60_000) / 1000);
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'oct-build-state-'));
  write('tsconfig.json', '{ "compilerOptions": { "outDir": "dist" }, "include": ["src", "test"] }');
  // Comments and a trailing comma, as tsc allows; a glob and a directory that does not exist yet.
  write(
    'tsconfig.build.json',
    '{\n  // the service only\n  "extends": "./tsconfig.json",\n  "include": ["src", "plugins/**/*.ts", "schemas",],\n}',
  );
  write('package.json', '{ "type": "module" }');
  write('prisma/schema.prisma', 'generator client {}');
  write('prisma.config.ts', 'export default {}');
  write('src/server.ts', 'export {}');
  write('src/generated/prisma/client.ts', 'export {}');
  write('schemas/call.ts', 'export {}');
  write('test/server.test.ts', 'export {}');
  settle();
  writeStamp(root, BUILT_AT);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('build staleness', () => {
  it('the rule: stale without a build, or when a source is newer than the build', () => {
    expect(isStale(undefined, 0)).toBe(true);
    expect(isStale(BUILT_AT, BUILT_AT - 1)).toBe(false);
    expect(isStale(BUILT_AT, BUILT_AT)).toBe(false);
    expect(isStale(BUILT_AT, BUILT_AT + 1)).toBe(true);
  });

  it('reads every top-level source directory from tsconfig.build.json (comments, globs, extends)', () => {
    expect(buildInputs(root).sort()).toEqual(
      [
        'src',
        'plugins',
        'schemas',
        'tsconfig.build.json',
        'tsconfig.json',
        'package.json',
        'prisma/schema.prisma',
        'prisma.config.ts',
      ].sort(),
    );
    expect(parseJsonc('{ "a": "// not a comment", /* c */ "b": [1,], }')).toEqual({ a: '// not a comment', b: [1] });
  });

  it('is current right after a build, and without a build it is not', () => {
    expect(buildStatus(root)).toEqual({ stale: false, reason: 'up to date' });
    fs.rmSync(path.join(root, STAMP));
    expect(buildStatus(root)).toMatchObject({ stale: true, reason: 'not built yet' });
  });

  it('an edit in any included directory makes it stale, also in one added after the build', () => {
    setMtime('schemas/call.ts', BUILT_AT + 1_000);
    expect(buildStatus(root)).toEqual({
      stale: true,
      reason: `${path.join('schemas', 'call.ts')} changed since the last build`,
    });
    setMtime('schemas/call.ts', BUILT_AT - 60_000);
    settle();
    expect(buildStatus(root).stale).toBe(false);
    write('plugins/auth.ts', 'export {}', BUILT_AT - 60_000); // created now: its directory is new
    expect(buildStatus(root).stale).toBe(true);
  });

  it('deleting a source makes it stale (its directory changes)', () => {
    fs.rmSync(path.join(root, 'src/server.ts'));
    expect(buildStatus(root).stale).toBe(true);
  });

  it('the Prisma schema and the configs count; the generated client, tests and other files do not', () => {
    for (const input of [
      'prisma/schema.prisma',
      'tsconfig.json',
      'tsconfig.build.json',
      'package.json',
      'prisma.config.ts',
    ]) {
      setMtime(input, BUILT_AT + 1_000);
      expect(buildStatus(root), input).toMatchObject({ stale: true });
      setMtime(input, BUILT_AT - 60_000);
    }
    setMtime('src/generated/prisma/client.ts', BUILT_AT + 1_000); // written by the build itself, after its start
    setMtime('test/server.test.ts', BUILT_AT + 1_000);
    write('README.md', '', BUILT_AT + 1_000);
    expect(buildStatus(root).stale).toBe(false);
  });

  it('the build is dated when it began: a source saved while it ran is rebuilt next time', () => {
    setMtime('src/server.ts', BUILT_AT + 500); // saved during the build
    writeStamp(root, BUILT_AT); // the build finishes later and records when it started
    expect(buildStatus(root).stale).toBe(true);
  });

  it('the first build of a fresh clone (no generated client yet) leaves it current', async () => {
    fs.rmSync(path.join(root, 'src/generated'), { recursive: true });
    settle();
    const started = beginBuild(root);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // What prisma generate does, a moment later: the client's directory made anew, its files written.
    write('src/generated/prisma/client.ts', 'export {}', Date.now());
    writeStamp(root, started);
    expect(buildStatus(root)).toEqual({ stale: false, reason: 'up to date' });
  });

  it("this repository: the generated client is where schema.prisma's generator writes it", () => {
    const schema = fs.readFileSync('prisma/schema.prisma', 'utf8');
    const output = /generator client \{[^}]*output\s*=\s*"([^"]+)"/.exec(schema)?.[1];
    expect(output).toBeDefined();
    expect(path.relative(path.resolve(), path.resolve('prisma', output!))).toBe(path.join(GENERATED_CLIENT, 'prisma'));
    expect(buildInputs(path.resolve())).toEqual(
      expect.arrayContaining(['src', 'tsconfig.build.json', 'prisma/schema.prisma']),
    );
  });
});
