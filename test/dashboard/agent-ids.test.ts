// Agent ids where the API needs them (issue 21, point 9): on the agents list, the agent's page and the default-agent
// menu, as selectable text with a Copy button from a self-hosted script (no inline script); and a default agent
// without a phone number warned about where it is chosen and on the agent's pages (point 10); and a ready curl
// example on the agent's page (issue 24, point 4).
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../../src/admin/agents.js';
import type { App } from '../../src/app.js';
import { buildTestApp } from '../helpers/app.js';
import { Value } from '@sinclair/typebox/value';
import { TriggerBody } from '../../schemas/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, HOST, html, Visitor } from './helpers.js';

import { updateAgentSettings } from '../helpers/fixtures.js';

let app: App;
let agencyId: string;
let withPhone: string;
let noPhone: string;
let owner: Visitor;
const SETTINGS = '/dashboard/settings/api-webhooks';
const COPY_SCRIPT = '<script src="/dashboard/assets/copy.js" defer></script>';
const NO_PHONE_WARNING = 'gets 400 "Agent has no phone number assigned"';

/** The page has no script but self-hosted files (the CSP allows no other). */
function scriptsAreFiles(body: string) {
  for (const tag of body.match(/<script[^>]*>[\s\S]*?<\/script>/g) ?? [])
    expect(tag).toMatch(/^<script src="\/dashboard\/assets\/[\w-]+\.js" defer><\/script>$/);
}

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Ids agency' }));
  ({ id: withPhone } = await createAgent(app.storage, {
    accountId: agencyId,
    name: 'Front desk',
    phone: '+14155550100',
    now: app.now(),
  }));
  ({ id: noPhone } = await createAgent(app.storage, { accountId: agencyId, name: 'Not yet dialling', now: app.now() }));
  await createUserWithPassword(app.storage, agencyId, 'owner@ids.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@ids.example')).status).toBe(303);
});

describe('agent ids', () => {
  it('the list shows each id as text with a Copy button, and loads the copy script', async () => {
    const { body } = await owner.get('/dashboard/agents');
    for (const id of [withPhone, noPhone]) {
      expect(body).toContain(
        `<code id="agent-id-${id}">${id}</code> <button type="button" class="copy" data-copy="agent-id-${id}" hidden>Copy</button>`,
      );
    }
    expect(body).toContain('<th scope="col">Agent id</th>');
    expect(body).toContain('<code>"agent_id": "&lt;agent id&gt;"</code>');
    expect(body).toContain(COPY_SCRIPT);
    scriptsAreFiles(body);
  });

  it("the agent's page shows its id with a Copy button", async () => {
    const { body } = await owner.get(`/dashboard/agents/${withPhone}`);
    expect(body).toContain(
      `<code id="agent-id">${withPhone}</code> <button type="button" class="copy" data-copy="agent-id" hidden>Copy</button>`,
    );
    expect(body).toContain(COPY_SCRIPT);
    scriptsAreFiles(body);
  });

  it("the agent's page shows a ready curl example naming it, with a Copy button", async () => {
    const { body } = await owner.get(`/dashboard/agents/${withPhone}`);
    // The service's address: PUBLIC_BASE_URL when set, else the host the page was asked on (these tests: HOST).
    const curl = [
      `curl -X POST 'https://${HOST}/api/v1/calls/trigger' \\`,
      "  -H 'Authorization: Bearer <your key>' \\",
      "  -H 'Content-Type: application/json' \\",
      `  -d '{"phone_number": "+14155552671", "agent_id": "${withPhone}"}'`,
    ].join('\n');
    expect(body).toContain(`<pre class="example" id="agent-curl"><code>${html(curl)}</code></pre>`);
    expect(body).toContain(
      '<button type="button" class="copy" data-copy="agent-curl" hidden>Copy the example</button>',
    );
    // The fields are the trigger's (schemas/trigger.ts): the example's body is one the trigger's schema accepts.
    const sent = JSON.parse(curl.split("-d '")[1]!.slice(0, -1)) as Record<string, unknown>;
    expect(Value.Check(TriggerBody, sent)).toBe(true);
    // Behind a proxy (these tests) the certificate is the proxy's: no -k, no word of one.
    expect(body).not.toContain('agent-curl-tls');
  });

  it('on a default install (self-signed certificate) the example says -k, and names the certificate', async () => {
    // TLS_MODE=self-signed, the default: the listener's certificate is generated under DATA_DIR/tls (src/tls.ts).
    // (TRUST_PROXY: the test's requests, injected without TLS, say they came over https, as the listener's do.)
    const env = { TLS_MODE: 'self-signed', DATA_DIR: '.data', TRUST_PROXY: 'true' };
    const { app: plain } = await buildTestApp({ env });
    const { id } = await createAgency(plain.storage, { name: 'Self-signed agency' });
    const { id: agent } = await createAgent(plain.storage, {
      now: plain.now(),
      accountId: id,
      name: 'Desk',
      phone: '+14155550100',
    });
    await createUserWithPassword(plain.storage, id, 'owner@self-signed.example');
    const visitor = new Visitor(plain);
    expect((await visitor.signIn('owner@self-signed.example')).status).toBe(303);
    const { body } = await visitor.get(`/dashboard/agents/${agent}`);
    const curl = [
      `curl -k -X POST 'https://${HOST}/api/v1/calls/trigger' \\`,
      "  -H 'Authorization: Bearer <your key>' \\",
      "  -H 'Content-Type: application/json' \\",
      `  -d '{"phone_number": "+14155552671", "agent_id": "${agent}"}'`,
    ].join('\n');
    expect(body).toContain(`<pre class="example" id="agent-curl"><code>${html(curl)}</code></pre>`);
    // The README's words: -k, or --cacert with the certificate kept in .data/tls/.
    expect(body).toContain('<code>--cacert .data/tls/cert.pem</code>');
  });

  it("the default-agent menu names each agent with its id, and shows the default's id to copy", async () => {
    await setDefaultAgent(app.storage, agencyId, withPhone, undefined, app.now());
    const { body } = await owner.get(SETTINGS);
    expect(body).toContain(`Front desk · +14155550100 · id ${withPhone}</option>`);
    expect(body).toContain(`Not yet dialling · no phone number · id ${noPhone}</option>`);
    expect(body).toContain(
      `<code id="default-agent-id">${withPhone}</code> <button type="button" class="copy" data-copy="default-agent-id" hidden>Copy</button>`,
    );
    expect(body).toContain(COPY_SCRIPT);
    expect(body).not.toContain(NO_PHONE_WARNING);
    scriptsAreFiles(body);
  });

  it('the copy script is served as JavaScript from the dashboard, which the CSP allows', async () => {
    const script = await app.inject({ url: '/dashboard/assets/copy.js', headers: { 'x-forwarded-proto': 'https' } });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.body).toContain('data-copy');
    const page = await owner.get('/dashboard/agents');
    expect(String(page.headers['content-security-policy'])).toMatch(/script-src 'self'/);
  });
});

describe('a default agent without a phone number', () => {
  it('is warned about when chosen, on the settings page, on the agents list and on its own page', async () => {
    const chosen = await owner.submit(SETTINGS, `${SETTINGS}/default-agent`, { agent_id: noPhone });
    expect(chosen.status).toBe(303);
    const settings = await owner.get(SETTINGS);
    // The one-time notice of the choice, then the lasting warning in the section.
    expect(settings.body).toContain(
      `<p class="notice error" role="status">Not yet dialling is the default agent now, but it has no phone number`,
    );
    expect(settings.body).toContain(
      `The default agent has no phone number: every trigger without <code>agent_id</code> gets\n  400 "Agent has no phone number assigned"`,
    );
    expect(settings.body).toContain(`href="/dashboard/agents/${noPhone}">agent page</a>`);

    const list = (await owner.get('/dashboard/agents')).body;
    const row = list.split('<tr>').find((r) => r.includes(`agent-id-${noPhone}`))!;
    expect(row).toContain(`Default agent without a phone number: triggers without <code>agent_id</code> get 400`);
    expect(list.split('<tr>').find((r) => r.includes(`agent-id-${withPhone}`))).not.toContain(
      'Default agent without a phone number',
    );

    const page = (await owner.get(`/dashboard/agents/${noPhone}`)).body;
    expect(page).toContain('This agent is the default agent of Ids agency and has no phone number');
    expect((await owner.get(`/dashboard/agents/${withPhone}`)).body).not.toContain(NO_PHONE_WARNING);

    // "Set as default" from the list warns too; with a number, the warnings go.
    const fromList = await owner.submit('/dashboard/agents', `/dashboard/agents/${noPhone}/default`);
    expect(fromList.status).toBe(303);
    expect((await owner.get('/dashboard/agents')).body).toContain(
      'Not yet dialling is the default agent now, but it has no phone number',
    );
    await updateAgentSettings(app.storage, noPhone, { phone: '+14155550101' });
    expect((await owner.get(SETTINGS)).body).not.toContain(NO_PHONE_WARNING);
    expect((await owner.get(`/dashboard/agents/${noPhone}`)).body).not.toContain(NO_PHONE_WARNING);
  });
});
