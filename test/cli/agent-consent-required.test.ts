// callctl's --consent-required (issue 48.4) on a real database: `agent create` and `agent update` set it and audit it
// as the operator, anything but on or off is a usage error (exit 2) that changes nothing, and the help names it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { callctl, type CliError } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/database.js';
import { json } from '../helpers/json.js';

let url: string;
let prisma: PrismaClient;
let accountId: string;

beforeAll(async () => {
  ({ url } = await freshDatabase());
  prisma = createPrisma(url, { max: 2 });
  accountId = (await ok(['agency', 'create', '--name', 'Consent Agency'])).id as string;
});
afterAll(async () => {
  await prisma.$disconnect();
});

async function ok(args: string[]): Promise<Record<string, unknown>> {
  const result = await callctl(url, [...args, '--json']);
  expect(result.stderr, args.join(' ')).toBe('');
  expect(result.code, args.join(' ')).toBe(0);
  return result.json();
}

async function fails(args: string[], code: number): Promise<string> {
  const result = await callctl(url, [...args, '--json']);
  expect(result.code, args.join(' ')).toBe(code);
  return json<CliError>(result.stderr).error;
}

const consentRequired = async (id: string) => (await prisma.agent.findUniqueOrThrow({ where: { id } })).consentRequired;
const lastAudit = (id: string) =>
  prisma.auditEntry.findFirst({
    where: { detail: { path: ['agent_id'], equals: id } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });

describe('callctl --consent-required', () => {
  it('agent create: off by default, on when asked, audited as agent_created', async () => {
    const plain = (await ok(['agent', 'create', '--account', accountId, '--name', 'Plain'])).id as string;
    expect(await consentRequired(plain)).toBe(false);
    expect((await lastAudit(plain))!.detail).toMatchObject({ consent_required: false });
    const strict = (
      await ok(['agent', 'create', '--account', accountId, '--name', 'Strict', '--consent-required', 'on'])
    ).id as string;
    expect(await consentRequired(strict)).toBe(true);
    expect(await lastAudit(strict)).toMatchObject({ action: 'agent_created', actorKind: 'operator' });
    expect((await lastAudit(strict))!.detail).toMatchObject({ consent_required: true });
  });

  it('agent update: changes only it, audited with what changed; the same value again changes nothing', async () => {
    const id = (await ok(['agent', 'create', '--account', accountId, '--name', 'Switching'])).id as string;
    const on = await ok(['agent', 'update', id, '--consent-required', 'on']);
    expect(on.changed).toEqual(['consent_required']);
    expect(await consentRequired(id)).toBe(true);
    expect(await lastAudit(id)).toMatchObject({
      action: 'agent_changed',
      detail: { agent_id: id, consent_required: true },
    });
    expect((await ok(['agent', 'update', id, '--consent-required', 'on'])).changed).toEqual([]);
    const off = await ok(['agent', 'update', id, '--consent-required', 'off']);
    expect(off.changed).toEqual(['consent_required']);
    expect(await consentRequired(id)).toBe(false);
  });

  it.each(['yes', 'true', 'ON', '', 'on\u0000'])('refuses %j before opening the database (exit 2)', async (value) => {
    const before = await prisma.agent.count();
    const error = await fails(
      ['agent', 'create', '--account', randomUUID(), '--name', 'Refused', '--consent-required', value],
      2,
    );
    expect(error).toContain('--consent-required must be on or off');
    expect(await prisma.agent.count()).toBe(before);
  });

  it('the help of agent create and agent update names it', async () => {
    for (const command of ['create', 'update']) {
      const help = await callctl(url, ['agent', command, '--help']);
      expect(help.stdout).toContain('--consent-required on|off');
    }
  });
});
