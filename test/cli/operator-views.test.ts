// What callctl shows an operator about real deliveries: `calls show` for people (every attempt, metadata as JSON
// values, no next attempt once finished), and `webhook show` / `webhook enable` after a 410 (secret kept).
import { describe, expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { json } from '../helpers/json.js';
import { match } from '../helpers/matchers.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceEndpoint } from '../helpers/seed.js';

const cli = callctl;

/** What `calls show --json` prints, as far as these tests read it. */
interface ShownCall {
  call: { metadata: unknown; deliveries: Record<string, unknown>[] };
}

async function setup() {
  const clock = { now: new Date('2054-12-01T10:00:00Z') };
  const { app, databaseUrl } = await buildTestApp({
    clock: () => clock.now,
    env: { WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
  });
  const tenant = await createTenant(app.storage);
  const receiver = await startReceiver();
  await setWebhook(app.storage, tenant.accountId, receiver.url, { allowPrivate: true, now: app.now() });
  /** A call that ends at once (canceled): one call.failed delivery. */
  const event = async (metadata: Record<string, unknown> = {}) => {
    const callId = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552671', name: '-', metadata }));
    await applyCallUpdate(
      app.storage,
      callId,
      { kind: 'failed', reason: 'canceled' },
      { now: clock.now, source: 'operator' },
    );
    return callId;
  };
  return { app, databaseUrl, clock, tenant, receiver, event };
}

describe('calls show for people', () => {
  it('lists every attempt (time, status, latency, error), keeps null apart from "-", and has no next attempt once finished', async () => {
    const s = await setup();
    s.receiver.respond = (_r, i) => ({ status: i === 0 ? 503 : 200 });
    const callId = await s.event({ empty: null, dash: '-', number: 42, text: '42' });
    await s.app.deliveryWorker!.settle();

    const pending = await cli(s.databaseUrl, ['calls', 'show', callId], {}, s.app.now);
    expect(pending.code).toBe(0);
    expect(pending.stdout).toMatch(
      /call\.failed, pending, webhook-id [0-9a-f-]{36}, 1 attempt, next attempt 2054-12-01T10:00:05\.000Z/,
    );
    const shown = (await cli(s.databaseUrl, ['calls', 'show', callId, '--json'], {}, s.app.now)).json<ShownCall>();
    expect(shown.call.deliveries[0]?.next_attempt_at).toBe('2054-12-01T10:00:05.000Z');

    s.clock.now = new Date('2054-12-01T10:00:05Z');
    await s.app.deliveryWorker!.settle();
    const { code, stdout } = await cli(s.databaseUrl, ['calls', 'show', callId], {}, s.app.now);
    expect(code).toBe(0);
    // Metadata as JSON values: null, the string "-", the number 42 and the string "42" all differ.
    expect(stdout).toMatch(/^ {2}"empty": +null$/m);
    expect(stdout).toMatch(/^ {2}"dash": +"-"$/m);
    expect(stdout).toMatch(/^ {2}"number": +42$/m);
    expect(stdout).toMatch(/^ {2}"text": +"42"$/m);
    // The caller's name "-" is not the absence of an email.
    expect(stdout).toMatch(/^name: +"-"$/m);
    expect(stdout).toMatch(/^email: +null$/m);
    // The finished delivery: no next attempt; both attempts with time, status, latency and error.
    expect(stdout).toMatch(/call\.failed, succeeded, webhook-id [0-9a-f-]{36}, 2 attempts$/m);
    expect(stdout).not.toContain('next attempt');
    expect(stdout).toMatch(/^ {4}attempt +time +status +latency +error$/m);
    expect(stdout).toMatch(/^ {4}1 +2054-12-01T10:00:00\.000Z +503 +\d+ ms +-$/m);
    expect(stdout).toMatch(/^ {4}2 +2054-12-01T10:00:05\.000Z +200 +\d+ ms +-$/m);
    const finished = (await cli(s.databaseUrl, ['calls', 'show', callId, '--json'], {}, s.app.now)).json<ShownCall>();
    expect(finished.call.deliveries[0]).toMatchObject({
      status: 'succeeded',
      next_attempt_at: null,
      attempts: [{ response_status: 503 }, { response_status: 200 }],
    });
    expect(finished.call.metadata).toEqual({ empty: null, dash: '-', number: 42, text: '42' });
  });

  it('an attempt without an answer shows its error', async () => {
    const s = await setup();
    await forceEndpoint(prismaOf(s.app), { accountId: s.tenant.accountId }, { url: 'http://127.0.0.1:1/hooks' });
    const callId = await s.event();
    await s.app.deliveryWorker!.settle();
    const { stdout } = await cli(s.databaseUrl, ['calls', 'show', callId], {}, s.app.now);
    expect(stdout).toMatch(/^ {4}1 +2054-12-01T10:00:00\.000Z +- +\d+ ms +connect ECONNREFUSED 127\.0\.0\.1:1$/m);
  });
});

describe('metadata as the client wrote it', () => {
  // Issue 12 item 7: a JavaScript object would move the integer-like keys ("2", "10") first.
  const METADATA = '{"crm_id":"L-42","score":9.5,"vip":true,"note":null,"10":"ten","2":"two"}';

  it('calls show and calls list keep its key order, integer-like keys included, in --json and for people', async () => {
    const { app, databaseUrl, tenant } = await setup();
    const response = await trigger(app, tenant.key, `{"phone_number":"+14155552671","metadata":${METADATA}}`);
    expect(response.statusCode, response.body).toBe(200);
    const callId = callIdOf(response);

    const shown = await cli(databaseUrl, ['calls', 'show', callId, '--json'], {}, app.now);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`"metadata":${METADATA}`);
    const listed = await cli(databaseUrl, ['calls', 'list', tenant.accountId, '--json'], {}, app.now);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`"metadata":${METADATA}`);
    expect(listed.json<{ calls: unknown[] }>().calls[0]).toMatchObject({
      call_id: callId,
      metadata: json<unknown>(METADATA),
    });

    const { code, stdout } = await cli(databaseUrl, ['calls', 'show', callId], {}, app.now);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    const first = lines.indexOf('metadata (JSON, as given):');
    expect(first).toBeGreaterThan(-1);
    expect(lines.slice(first + 1, first + 7).map((line) => line.trim().replace(/: +/, ': '))).toEqual([
      '"crm_id": "L-42"',
      '"score": 9.5',
      '"vip": true',
      '"note": null',
      '"10": "ten"',
      '"2": "two"',
    ]);
  });
});

describe('webhook show and webhook enable', () => {
  it('after a 410: show says why it is off and what waits; enable turns it on with the same secret, once', async () => {
    const s = await setup();
    const before = await prismaOf(s.app).webhookEndpoint.findUniqueOrThrow({
      where: { accountId: s.tenant.accountId },
    });
    s.receiver.respond = () => ({ status: 410 });
    await s.event();
    await s.app.deliveryWorker!.settle();

    const shown = (await cli(s.databaseUrl, ['webhook', 'show', s.tenant.accountId, '--json'], {}, s.app.now)).json<{
      webhook: Record<string, unknown>;
    }>();
    // The delivery answered 410 reached no one: held until the endpoint is enabled again.
    expect(shown).toEqual({
      webhook: {
        url: s.receiver.url,
        enabled: false,
        disabled_reason: match.stringMatching(/410 Gone/),
        pending: 0,
        held: 1,
        held_since: match.any(String),
        failed: 0,
      },
    });
    const human = await cli(s.databaseUrl, ['webhook', 'show', s.tenant.accountId], {}, s.app.now);
    expect(human.stdout).toMatch(/^ {2}enabled: +false$/m);
    expect(human.stdout).toContain(`callctl webhook enable ${s.tenant.accountId}`);
    expect(human.stdout).not.toContain('whsec_');

    // The receiver is fixed first: enabling sends the held delivery at once.
    s.receiver.respond = () => ({ status: 200 });
    const enabled = await cli(s.databaseUrl, ['webhook', 'enable', s.tenant.accountId, '--json'], {}, s.app.now);
    expect(enabled.code).toBe(0);
    expect(enabled.json()).toEqual({
      account_id: s.tenant.accountId,
      url: s.receiver.url,
      enabled: true,
      previously: { enabled: false, disabled_reason: shown.webhook.disabled_reason },
      changed_at: match.any(String),
      released: 1,
    });
    const after = await prismaOf(s.app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: s.tenant.accountId } });
    expect(after).toMatchObject({ enabled: true, disabledReason: null, secret: before.secret, url: before.url });
    const again = await cli(s.databaseUrl, ['webhook', 'enable', s.tenant.accountId], {}, s.app.now);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^changed at: +-$/m);
    expect(again.stdout).toContain('already enabled');

    // Events flow again, the one held among them.
    await s.event();
    await s.app.deliveryWorker!.settle();
    expect(
      (await cli(s.databaseUrl, ['webhook', 'show', s.tenant.accountId, '--json'], {}, s.app.now)).json<{
        webhook: unknown;
      }>().webhook,
    ).toMatchObject({ enabled: true, pending: 0, held: 0, failed: 0 });
    expect(s.receiver.received.map((r) => r.headers['webhook-id'])).toHaveLength(3);
  });

  it('an account without an endpoint: show says none, enable is refused (exit 1)', async () => {
    const s = await setup();
    const other = await createTenant(s.app.storage);
    expect(
      JSON.parse((await cli(s.databaseUrl, ['webhook', 'show', other.accountId, '--json'], {}, s.app.now)).stdout),
    ).toEqual({
      webhook: null,
    });
    const refused = await cli(s.databaseUrl, ['webhook', 'enable', other.accountId, '--json'], {}, s.app.now);
    expect(refused.code).toBe(1);
    expect(json<CliError>(refused.stderr).error).toMatch(/no webhook endpoint/);
  });
});
