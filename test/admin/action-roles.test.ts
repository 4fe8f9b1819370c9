// Every src/admin action declares who may run it (src/admin/action-roles.ts): each exported function whose first
// parameter is the storage is in the table, so a new action fails here until it says its role.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { actionRole } from '../../src/admin/action-roles.js';

const ADMIN_DIR = path.resolve(import.meta.dirname, '../../src/admin');
/** Helpers that take the storage but act for an action that is declared (never run on their own by a caller). */
const NOT_ACTIONS = new Set([
  ...['accountAndAgency', 'agencyOf', 'audit', 'findAccount', 'findAgent', 'findUser', 'keepLastOwner'],
  ...['addedByOf', 'endWaitingCalls', 'linkLimitCheck', 'refuseOverLimit'],
]);

describe('declared admin actions', () => {
  it('declares a role for every exported function that takes the storage', async () => {
    const undeclared: string[] = [];
    let actions = 0;
    for (const file of readdirSync(ADMIN_DIR).filter((f) => f.endsWith('.ts'))) {
      const module = (await import(path.join(ADMIN_DIR, file))) as Record<string, unknown>;
      for (const [name, value] of Object.entries(module)) {
        if (typeof value !== 'function' || NOT_ACTIONS.has(name)) continue;
        const firstParameter = /^(?:async\s+)?function\s*\w*\s*\(\s*(\w+)/.exec(String(value))?.[1];
        if (firstParameter !== 'storage' && firstParameter !== 'tx') continue;
        actions++;
        if (actionRole(value as () => unknown) === undefined) undeclared.push(`${file}: ${name}`);
      }
    }
    expect(actions).toBeGreaterThan(30);
    expect(undeclared).toEqual([]);
  });
});
