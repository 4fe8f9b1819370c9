// Every TypeScript example in the client's README compiles against the client's source, strict, as a user's ESM file
// importing '@outbound-call-trigger/client': an example cannot drift from the API it shows.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnChild, stopChild } from '../helpers/child-processes.js';

const CLIENT = path.resolve('clients/typescript');
const TSC = path.join(CLIENT, 'node_modules/typescript/bin/tsc');

let dir: string;
let snippets: string[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ts-client-readme-'));
  const readme = await readFile(path.join(CLIENT, 'README.md'), 'utf8');
  snippets = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the TypeScript client's README", () => {
  it('has its examples: a trigger, the retry options, a webhook receiver', () => {
    expect(snippets).toHaveLength(3);
    expect(snippets[0]!.trimEnd().split('\n').length).toBeLessThanOrEqual(10);
  });

  it('examples compile against the client', async () => {
    const files = await Promise.all(
      snippets.map(async (snippet, i) => {
        const file = path.join(dir, `example-${i + 1}.mts`);
        await writeFile(file, snippet);
        return file;
      }),
    );
    const tsconfig = {
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [path.join(CLIENT, 'node_modules/@types')],
        paths: { '@outbound-call-trigger/client': [path.join(CLIENT, 'src/index.ts')] },
      },
      files,
    };
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const child = spawnChild(process.execPath, [TSC, '-p', path.join(dir, 'tsconfig.json')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    await stopChild(child);
    expect(output).toBe('');
    expect(code).toBe(0);
  });
});
