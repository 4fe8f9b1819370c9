// The Python client (clients/python) against the real server: its pytest suite runs with Debian's python3-pytest and
// python3-httpx against two listening apps (one at one request a minute, for a real 429) and a file of deliveries the
// server really sent; the Python examples of docs/integrations.md run; and the package installs offline, py.typed
// included.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import type { Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';
import { buildWebhookApp } from '../helpers/webhook-app.js';
import { CLIENT_DIR, requirePythonPackages, ROOT, runPython } from './python-run.js';

let app: App;
let tenant: Tenant;
let receiver: Receiver;
let secret: string;
let baseUrl: string;
let limited: App;
let limitedTenant: Tenant;
let limitedUrl: string;
let scratch: string;
let webhookFile: string;

beforeAll(async () => {
  await requirePythonPackages();
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-python-'));
  ({ app, tenant, receiver, secret } = await buildWebhookApp(20));
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });

  // One request a minute per key: the pytest suite spends its key's request, then meets the 429.
  ({ app: limited } = await buildTestApp({
    databaseUrl: app.config.DATABASE_URL!,
    env: { RATE_LIMIT_PER_MINUTE: '1' },
  }));
  limitedTenant = await createTenant(limited.storage, { name: 'Limited Agency' });
  limitedUrl = await limited.listen({ port: 0, host: '127.0.0.1' });

  // A call followed to its end: the deliveries the receiver got, raw, for the Python side to verify.
  const callId = callIdOf(
    await trigger(app, tenant.key, { phone_number: '+14155552671', metadata: { crm_id: 'L-9' } }),
  );
  const mine = () => receiver.received.filter((r) => r.body.includes(callId));
  await waitFor(mine, (got) => got.some((r) => r.body.includes('"call.completed"')), 30_000);
  webhookFile = path.join(scratch, 'deliveries.json');
  const deliveries = mine().map((r) => ({
    headers: Object.fromEntries(
      Object.entries(r.headers).filter((e): e is [string, string] => typeof e[1] === 'string'),
    ),
    body: r.body,
  }));
  await fs.writeFile(webhookFile, JSON.stringify({ secret, call_id: callId, deliveries }));
});

/** The first python block after `heading` in docs/integrations.md. */
async function pythonSnippet(heading: string): Promise<string> {
  const markdown = await fs.readFile(path.join(ROOT, 'docs/integrations.md'), 'utf8');
  const at = markdown.indexOf(`\n${heading}\n`);
  const code = at < 0 ? undefined : /```python\n([\s\S]*?)```/.exec(markdown.slice(at))?.[1];
  if (!code) throw new Error(`docs/integrations.md: no python block after ${heading}`);
  return code;
}

afterAll(async () => {
  if (scratch) await fs.rm(scratch, { recursive: true, force: true });
});

describe('the Python client', () => {
  it('passes its pytest suite against the real server', async () => {
    const run = await runPython(['-m', 'pytest', 'clients/python/tests', '-q', '-p', 'no:cacheprovider'], {
      env: {
        OCT_BASE_URL: baseUrl,
        OCT_API_KEY: tenant.key,
        OCT_LIMITED_BASE_URL: limitedUrl,
        OCT_LIMITED_API_KEY: limitedTenant.key,
        OCT_WEBHOOK_FILE: webhookFile,
      },
      timeoutMs: 110_000,
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/\d+ passed/);
    expect(run.stdout).not.toMatch(/skipped|xfail/);
  });

  it('stored one call for the key that met the 429 and was retried', async () => {
    expect(await prismaOf(limited).call.count({ where: { accountId: limitedTenant.accountId } })).toBe(1);
  });

  it("docs/integrations.md's example triggers a call", async () => {
    const run = await runPython(['-c', await pythonSnippet('### Triggering a call')], {
      env: { OUTBOUND_CALLS_URL: baseUrl, OUTBOUND_CALLS_API_KEY: tenant.key },
    });
    expect(run.code, run.stderr).toBe(0);
    const [callId, replayed] = run.stdout.trim().split(' ');
    expect(replayed).toBe('False');
    expect(await prismaOf(app).call.count({ where: { id: callId, metadata: { equals: { crm_id: 'L-42' } } } })).toBe(1);
  });

  it("docs/integrations.md's handler accepts the server's deliveries and refuses a tampered one", async () => {
    const program = `${await pythonSnippet('### Verifying webhooks')}
import json
given = json.load(open(os.environ["OCT_WEBHOOK_FILE"]))
for d in given["deliveries"]:
    body = d["body"].encode()
    print(handle(body, d["headers"]), handle(body.replace(b"L-9", b"L-8"), d["headers"]))
`;
    const run = await runPython(['-c', program], { env: { WEBHOOK_SECRET: secret, OCT_WEBHOOK_FILE: webhookFile } });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.filter((line) => /^[0-9a-f-]{36} /.test(line))).toHaveLength(1); // call.completed prints its call
    expect(lines.filter((line) => /^\d+ \d+$/.test(line)).length).toBeGreaterThanOrEqual(2);
    for (const line of lines.filter((l) => /^\d+ \d+$/.test(l))) expect(line).toBe('204 400');
  });

  it('installs from the repository path with no package index, py.typed included', async () => {
    const source = path.join(scratch, 'source');
    const target = path.join(scratch, 'site');
    // A copy: setuptools builds in the source folder, which must stay clean.
    await fs.cp(CLIENT_DIR, source, { recursive: true, filter: (from) => !from.includes('__pycache__') });
    const install = await runPython(
      ['-m', 'pip', 'install', '--no-index', '--no-build-isolation', '--no-deps', '--target', target, source],
      { timeoutMs: 110_000 },
    );
    expect(install.code, install.stderr).toBe(0);
    const check = await runPython(
      [
        '-c',
        'import outbound_call_trigger as o, pathlib; print(pathlib.Path(o.__file__).parent.joinpath("py.typed").exists(), o.__version__)',
      ],
      { env: { PYTHONPATH: target }, timeoutMs: 30_000 },
    );
    expect(check.stdout.trim()).toBe('True 0.1.0');
  });
});
