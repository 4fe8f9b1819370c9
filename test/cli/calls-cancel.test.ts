// `callctl calls cancel <call-id>`: a waiting call ends failed (canceled), audited as the operator's; a second cancel
// says it was already canceled (exit 0); a call already dialling or ended is refused (exit 1) and left as it is; an
// unknown id is refused (exit 1); a missing id is a usage error (exit 2).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

async function setup() {
  const { app, databaseUrl } = await buildTestApp();
  const tenant = await createTenant(app.storage);
  const waiting = async () => {
    const res = await trigger(app, tenant.key, { phone_number: '+14155552671' });
    expect(res.statusCode, res.body).toBe(200);
    return callIdOf(res);
  };
  const statusOf = (id: string) =>
    prismaOf(app).call.findUniqueOrThrow({ where: { id }, select: { status: true, failureReason: true } });
  return { app, databaseUrl, waiting, statusOf };
}

describe('callctl calls cancel', () => {
  it('cancels a waiting call, and says so again without changing anything', async () => {
    const s = await setup();
    const id = await s.waiting();
    const first = await callctl(s.databaseUrl, ['calls', 'cancel', id, '--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.json()).toEqual({
      call_id: id,
      status: 'failed',
      failure_reason: 'canceled',
      already_canceled: false,
    });
    expect(await s.statusOf(id)).toEqual({ status: 'failed', failureReason: 'canceled' });
    const events = await prismaOf(s.app).callEvent.findMany({ where: { callId: id, toStatus: 'failed' } });
    expect(events.map((e) => e.source)).toEqual(['operator']);
    expect(
      await prismaOf(s.app).auditEntry.findMany({
        where: { action: 'call_canceled' },
        select: { actorKind: true, detail: true },
      }),
    ).toEqual([{ actorKind: 'operator', detail: { call_id: id } }]);

    const again = await callctl(s.databaseUrl, ['calls', 'cancel', id]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^already canceled: +true$/m);
    expect(again.stdout).toContain('It was already canceled: nothing changed.');
    expect(await prismaOf(s.app).auditEntry.count({ where: { action: 'call_canceled' } })).toBe(1);
  });

  it('refuses a call already dialling or ended (exit 1) and leaves it as it is', async () => {
    const s = await setup();
    const dialing = await s.waiting();
    await applyCallUpdate(s.app.storage, dialing, { kind: 'dialing' }, { now: new Date(), source: 'dispatcher' });
    const refused = await callctl(s.databaseUrl, ['calls', 'cancel', dialing, '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(JSON.parse(refused.stderr) as CliError).toEqual({
      error: `Call ${dialing} is already dialling: only a call that is still waiting can be canceled`,
    });
    expect(await s.statusOf(dialing)).toEqual({ status: 'dialing', failureReason: null });

    const ended = await s.waiting();
    await applyCallUpdate(
      s.app.storage,
      ended,
      { kind: 'failed', reason: 'busy' },
      { now: new Date(), source: 'provider' },
    );
    const human = await callctl(s.databaseUrl, ['calls', 'cancel', ended]);
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(
      `Call ${ended} has already ended (failed): only a call that is still waiting can be canceled`,
    );
    expect(await s.statusOf(ended)).toEqual({ status: 'failed', failureReason: 'busy' });
    expect(await prismaOf(s.app).auditEntry.count({ where: { action: 'call_canceled' } })).toBe(0);
  });

  it('refuses an unknown call (exit 1) and a missing id (exit 2)', async () => {
    const s = await setup();
    const missing = randomUUID();
    const unknown = await callctl(s.databaseUrl, ['calls', 'cancel', missing, '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr) as CliError).toEqual({ error: `No call ${missing}` });
    expect((await callctl(s.databaseUrl, ['calls', 'cancel', 'not-an-id', '--json'])).code).toBe(1);
    expect((await callctl(s.databaseUrl, ['calls', 'cancel', '--json'])).code).toBe(2);
  });
});
