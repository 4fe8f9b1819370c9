// The snippet next to the signing secret (issue 24.3) verifies a real delivery: the Node code exactly as the page
// shows it runs, in a node process of its own with the `standardwebhooks` package, on the body and headers a receiver
// got, with the secret the page showed once; with another secret, or a changed body, it refuses.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { buildTestApp } from '../helpers/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import type { App } from '../../src/app.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { spawnChild } from '../helpers/child-processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

const OWN = '/dashboard/settings/api-webhooks';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let app: App;
let tenant: Tenant;
let receiver: Receiver;
let visitor: Visitor;

/** The text of an escaped page fragment, as a browser shows it (and copies it). */
const text = (fragment: string) =>
  fragment
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
const snippet = (body: string, id: string) => text(new RegExp(`<code id="${id}">([\\s\\S]*?)</code>`).exec(body)![1]!);

/** Runs `code` as an ES module in a node process of its own (from the project, so its packages resolve). */
async function runNode(code: string, env: Record<string, string>) {
  const child: ChildProcess = spawnChild(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code_ = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code: code_, stdout, stderr };
}

beforeAll(async () => {
  ({ app } = await buildTestApp({
    env: { ...DASHBOARD_ENV, WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    jobs: { webhooks: { pollMs: 3_600_000 } },
  }));
  tenant = await createTenant(app.storage);
  receiver = await startReceiver();
  await createUserWithPassword(app.storage, tenant.accountId, 'owner@verify.example');
  visitor = new Visitor(app);
  expect((await visitor.signIn('owner@verify.example')).status).toBe(303);
});

describe('the verification snippet', () => {
  it('in Node, as shown next to the secret, verifies a real delivery with that secret, and refuses others', async () => {
    const form = await visitor.get(`${OWN}/webhook`);
    const replaces = /name="replaces" value="([^"]*)"/.exec(form.body)![1]!;
    const shown = await visitor.request('POST', `${OWN}/webhook`, {
      _csrf: visitor.lastCsrf!,
      replaces,
      url: receiver.url,
    });
    const secret = /id="secret-value"[^>]* value="(whsec_[^"]+)"/.exec(shown.body)![1]!;
    const node = snippet(shown.body, 'verify-node');
    expect(node).toContain('new Webhook(process.env.WEBHOOK_SECRET)');
    expect(node).toContain('wh.verify(payload, headers)');
    // The same snippet under the settings' webhook section, with its Copy buttons (copy.js loaded once).
    const settings = (await visitor.get(OWN)).body;
    expect(snippet(settings, 'verify-node')).toBe(node);
    expect(snippet(settings, 'verify-python')).toContain('from standardwebhooks.webhooks import Webhook');
    expect(settings).toContain('<button type="button" class="copy" data-copy="verify-node"');
    expect(settings.split('<script src="/dashboard/assets/copy.js" defer></script>')).toHaveLength(2);

    const callId = callIdOf(
      await trigger(app, tenant.key, { phone_number: '+14155552671' }, { 'x-forwarded-proto': 'https' }),
    );
    await applyCallUpdate(
      app.storage,
      callId,
      { kind: 'failed', reason: 'canceled' },
      { now: app.now(), source: 'operator' },
    );
    await app.deliveryWorker!.settle();
    const [delivery] = await receiver.waitFor(1);
    const program = (payload: string) =>
      `const payload = ${JSON.stringify(payload)};\nconst headers = ${JSON.stringify(delivery!.headers)};\n${node}\n`;

    const verified = await runNode(program(delivery!.body), { WEBHOOK_SECRET: secret });
    expect(verified.stderr).toBe('');
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`^call\\.failed \\{[\\s\\S]*${callId}`));

    const otherSecret = await runNode(program(delivery!.body), { WEBHOOK_SECRET: generateWebhookSecret() });
    expect(otherSecret.code).not.toBe(0);
    expect(otherSecret.stderr).toContain('No matching signature found');
    const changed = await runNode(program(delivery!.body.replace('canceled', 'busy')), { WEBHOOK_SECRET: secret });
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain('No matching signature found');
  });
});
