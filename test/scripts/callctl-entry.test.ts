// bin/callctl.js runs the build (its one-file bundle, else dist/src/cli/main.js) while it is built from the current
// sources, and the TypeScript source (through tsx) once a source changed: a checkout laid out like this one, with
// stand-ins for the entry points.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeStamp } from '../../scripts/build-state.js';

const run = promisify(execFile);
const BUILT_AT = Date.parse('1998-01-01T12:00:00Z');
const standIn = (which: string) =>
  `export async function runCli(argv, io) { io.stdout('${which} ' + argv.join(' ') + '\\n'); return 0; }\n`;
let root: string;

function write(relative: string, text: string) {
  const file = path.join(root, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}
function age(dir: string) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) age(file);
    fs.utimesSync(file, (BUILT_AT - 60_000) / 1000, (BUILT_AT - 60_000) / 1000);
  }
}
const callctl = async (...args: string[]) =>
  (await run(process.execPath, [path.join(root, 'bin/callctl.js'), ...args], { cwd: root })).stdout;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'oct-callctl-entry-'));
  for (const file of [
    'bin/callctl.js',
    'scripts/build-state.js',
    'tsconfig.json',
    'tsconfig.build.json',
    'package.json',
    'prisma/schema.prisma',
  ]) {
    write(file, fs.readFileSync(file, 'utf8'));
  }
  fs.symlinkSync(path.resolve('node_modules'), path.join(root, 'node_modules'));
  write('src/cli/main.ts', standIn('source'));
  write('dist/src/cli/main.js', standIn('compiled'));
  age(root);
  writeStamp(root, BUILT_AT);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('the callctl entry', () => {
  it('runs the compiled build while it is current', async () => {
    expect(await callctl('calls', 'list', 'x')).toBe('compiled calls list x\n');
  });

  it('runs the sources through tsx once one changed after the build, and the build again once rebuilt', async () => {
    const later = Date.now() / 1000;
    fs.utimesSync(path.join(root, 'src/cli/main.ts'), later, later);
    expect(await callctl('agency', 'create')).toBe('source agency create\n');
    writeStamp(root, Date.now() + 1_000);
    expect(await callctl('agency', 'create')).toBe('compiled agency create\n');
  });

  it('prefers the one-file bundle of the same build', async () => {
    write('dist/callctl.mjs', standIn('bundled'));
    age(root);
    expect(await callctl('calls', 'list', 'x')).toBe('bundled calls list x\n');
  });

  it('runs the sources when there was no build yet', async () => {
    fs.rmSync(path.join(root, 'dist/.build-stamp'));
    expect(await callctl('--help')).toBe('source --help\n');
  });
});
