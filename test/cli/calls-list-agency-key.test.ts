// `callctl calls list <client>` lists the calls an agency's key placed on the client's agents beside the client's own,
// each marked with who triggered it (`triggered_by`, and `account_id`: the key's account); a sibling client's list has
// none of them; the agency's own list has them too (they are its calls), marked with the client they are listed for.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp } from '../helpers/app.js';
import { callctl } from '../helpers/cli.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

let app: App;
let databaseUrl: string;
let agency: Tenant;
let client: Tenant;
let sibling: Tenant;
let listed: string;
let own: string;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
  agency = await createTenant(app.storage, { name: 'Acme Agency' });
  client = await createClientTenant(app.storage, agency.accountId);
  sibling = await createClientTenant(app.storage, agency.accountId);
  listed = callIdOf(await trigger(app, agency.key, { phone_number: '+14155550601', agent_id: client.agentId }));
  own = callIdOf(await trigger(app, client.key, { phone_number: '+14155550602' }));
});

type Listed = { call_id: string; account_id?: string; listed_for_account_id?: string; triggered_by?: string };

async function list(accountId: string, human = false): Promise<{ calls: Listed[] } | string> {
  const run = await callctl(databaseUrl, ['calls', 'list', accountId, ...(human ? [] : ['--json'])]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return human ? run.stdout : (JSON.parse(run.stdout) as { calls: Listed[] });
}

describe('callctl calls list and an agency key on a client agent', () => {
  it("lists the agency's call for the client, newest first, marked with who triggered it", async () => {
    const { calls } = (await list(client.accountId)) as { calls: Listed[] };
    expect(calls.map((c) => c.call_id)).toEqual([own, listed]);
    expect(calls[1]).toMatchObject({
      account_id: agency.accountId,
      listed_for_account_id: client.accountId,
      triggered_by: 'Acme Agency (agency key)',
    });
    expect(calls[0]).not.toHaveProperty('triggered_by');
    expect(await list(client.accountId, true)).toContain('Acme Agency (agency key)');
  });

  it("is not in a sibling client's list, and is in the agency's own", async () => {
    expect(((await list(sibling.accountId)) as { calls: Listed[] }).calls).toEqual([]);
    const { calls } = (await list(agency.accountId)) as { calls: Listed[] };
    expect(calls.map((c) => c.call_id)).toEqual([listed]);
    expect(calls[0]).toMatchObject({ listed_for_account_id: client.accountId });
  });
});
