// The TypeScript client's generated types (clients/typescript/src/schema.ts) are what openapi-typescript makes of the
// committed openapi/openapi.json: after a change of the contract, `npm run generate --prefix clients/typescript`.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnChild, stopChild } from '../helpers/child-processes.js';

const CLIENT = path.resolve('clients/typescript');
const SPEC = path.resolve('openapi/openapi.json');
const COMMITTED = path.join(CLIENT, 'src/schema.ts');
const GENERATOR = path.join(CLIENT, 'node_modules/openapi-typescript/bin/cli.js');

/** Runs openapi-typescript as `npm run generate` does (the script's own arguments), in a process group of its own. */
async function generate(spec: string, output: string): Promise<void> {
  const child = spawnChild(process.execPath, [GENERATOR, spec, '--output', output], {
    cwd: CLIENT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  await stopChild(child);
  if (code !== 0) throw new Error(`openapi-typescript exited with ${String(code)}: ${stderr}`);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ts-client-types-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the TypeScript client types', () => {
  it('the script `npm run generate` runs is the one this test runs', async () => {
    const manifest = JSON.parse(await readFile(path.join(CLIENT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.generate).toBe('openapi-typescript ../../openapi/openapi.json --output src/schema.ts');
  });

  it('are what openapi-typescript generates from the committed openapi/openapi.json', async () => {
    const output = path.join(dir, 'schema.ts');
    await generate(SPEC, output);
    const committed = await readFile(COMMITTED, 'utf8');
    expect(
      committed === (await readFile(output, 'utf8')),
      'clients/typescript/src/schema.ts is out of date: run `npm run generate --prefix clients/typescript`',
    ).toBe(true);
  });

  it('would fail after a change of the contract: a new description gives other types', async () => {
    const spec = JSON.parse(await readFile(SPEC, 'utf8')) as {
      components: { schemas: { TriggerResponse: { properties: { call_id: { description: string } } } } };
    };
    spec.components.schemas.TriggerResponse.properties.call_id.description = 'Changed for the drift test';
    const changedSpec = path.join(dir, 'changed.json');
    await writeFile(changedSpec, JSON.stringify(spec));
    const output = path.join(dir, 'changed.ts');
    await generate(changedSpec, output);
    expect(await readFile(output, 'utf8')).not.toBe(await readFile(COMMITTED, 'utf8'));
  });
});
