// What the TypeScript client's npm package holds (`npm pack --dry-run --json`, which builds dist/ through prepack):
// dist, README, package.json and a LICENSE if there is one, nothing else; its exports resolve to packed files; and the
// built package loads in plain Node with the same exports as its source.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as source from '../../clients/typescript/src/index.js';
import { spawnChild, stopChild } from '../helpers/child-processes.js';

const CLIENT = path.resolve('clients/typescript');

interface Manifest {
  name: string;
  type: string;
  engines: { node: string };
  files: string[];
  exports: Record<string, string | Record<string, string>>;
  dependencies: Record<string, string>;
}

/** Runs a command in the client's folder, in a process group of its own; its stdout, or an error with its stderr. */
async function run(command: string, args: string[]): Promise<string> {
  const child = spawnChild(command, args, { cwd: CLIENT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  await stopChild(child);
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${String(code)}: ${stderr}`);
  return stdout;
}

let packed: string[];
let manifest: Manifest;

beforeAll(async () => {
  const [pack] = JSON.parse(await run('npm', ['pack', '--dry-run', '--json'])) as [{ files: { path: string }[] }];
  packed = pack.files.map((f) => f.path).sort();
  manifest = JSON.parse(await readFile(path.join(CLIENT, 'package.json'), 'utf8')) as Manifest;
});

describe('the TypeScript client package', () => {
  it('holds only dist, README.md, package.json and LICENSE', () => {
    const stray = packed.filter((file) => !/^(dist\/[\w-]+\.(js|d\.ts)|README\.md|package\.json|LICENSE)$/.test(file));
    expect(stray).toEqual([]);
    expect(packed).toEqual(expect.arrayContaining(['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']));
  });

  it('holds the built module and its types for every source file', async () => {
    const modules = (await readdir(path.join(CLIENT, 'src')))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -3));
    const built = modules.flatMap((m) => [`dist/${m}.js`, `dist/${m}.d.ts`]);
    expect(packed.filter((file) => file.startsWith('dist/'))).toEqual(built.sort());
  });

  it('is an ESM package for Node 20 and later whose exports name packed files', () => {
    expect(manifest).toMatchObject({
      name: '@outbound-call-trigger/client',
      type: 'module',
      engines: { node: '>=20' },
    });
    expect(manifest.files).toEqual(['dist']);
    const targets = Object.values(manifest.exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t)));
    for (const target of targets) expect(packed).toContain(target.replace(/^\.\//, ''));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['openapi-fetch', 'standardwebhooks']);
  });

  it('loads in plain Node from its exports with the same exports as its source', async () => {
    const script =
      "const m = await import('@outbound-call-trigger/client'); console.log(JSON.stringify(Object.keys(m)));";
    // A package can import itself by name through its exports map: the way a user's code resolves it.
    const names = JSON.parse(await run(process.execPath, ['--input-type=module', '-e', script])) as string[];
    expect(names.sort()).toEqual(Object.keys(source).sort());
  });
});
