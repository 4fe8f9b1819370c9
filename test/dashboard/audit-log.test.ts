// The Audit log page: newest first, 50 a page, "Older" continues exactly where the page ended (keyset), entries at
// the same instant are neither lost nor repeated, and what each entry says (who, account, action, IP) is escaped.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { buildTestApp } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';

let app: App;
let agencyId: string;
let clientId: string;
let visitor: Visitor;

const markers = (body: string) => [...body.matchAll(/n-(\d+)-n/g)].map((m) => Number(m[1]));

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Acme' }));
  ({ id: clientId } = await createClient(app.storage, { agencyId, name: '<b>Client</b>', now: app.now() }));
  await createUserWithPassword(app.storage, agencyId, 'auditor@example.com');
  // 120 entries, three at each instant (ties), alternating between the agency and its client; n grows with time.
  const base = Date.parse('2054-01-01T00:00:00Z');
  for (let n = 0; n < 120; n++) {
    await app.storage.audit.insertAuditEntry({
      accountId: n % 2 ? clientId : agencyId,
      agencyId,
      actorKind: 'operator',
      actorUserId: null,
      action: 'user_created',
      detail: { n: `n-${n}-n` },
      ip: null,
      at: new Date(base + Math.floor(n / 3) * 1000),
    });
  }
  visitor = new Visitor(app);
  await visitor.signIn('auditor@example.com');
});

describe('audit log page', () => {
  it('pages newest first, 50 at a time, without losing or repeating entries at the same instant', async () => {
    const seen: number[] = [];
    let url: string | undefined = '/dashboard/audit-log';
    let pages = 0;
    while (url && pages < 10) {
      const page = await visitor.get(url);
      expect(page.status).toBe(200);
      const numbers = markers(page.body);
      expect(numbers.length).toBeLessThanOrEqual(50);
      seen.push(...numbers);
      url = /<a href="([^"]+)">Older<\/a>/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
      pages++;
    }
    // The sign-in of beforeAll is the newest entry; the 120 follow, each once, newest first.
    expect(seen).toHaveLength(120);
    expect(new Set(seen).size).toBe(120);
    const times = seen.map((n) => Math.floor(n / 3));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(pages).toBe(3);
  });

  it('names the client an entry belongs to, escaped, and ignores a cursor that is not one', async () => {
    const page = await visitor.get('/dashboard/audit-log?before=garbage');
    expect(page.status).toBe(200);
    expect(page.body).toContain('&lt;b&gt;Client&lt;/b&gt;');
    expect(page.body).not.toContain('<b>Client</b>');
    expect(page.body).toContain('operator (callctl)');
  });
});
