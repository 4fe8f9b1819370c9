// The dependency rules of eslint.config.js ("Layers" in docs/architecture.md) fail on a crossing and pass an allowed
// import: each snippet is linted as if it were a file of that folder, with the repo's own config (only that rule,
// without type information, so it stays fast).
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const RULE = '@typescript-eslint/no-restricted-imports';
const eslint = new ESLint({
  cwd: path.resolve(import.meta.dirname, '../..'),
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
  ruleFilter: ({ ruleId }) => ruleId === RULE,
});

async function refusals(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath });
  const messages = result?.messages ?? [];
  expect(messages.filter((m) => m.ruleId !== RULE)).toEqual([]);
  return messages.map((m) => m.message);
}

// [file, import, what the message must advise]
const REFUSED: [string, string, RegExp][] = [
  ['schemas/x.ts', "import { AppError } from '../src/errors.js';", /leaf under schemas\//],
  ['schemas/dashboard/x.ts', "import type { Viewer } from '../../plugins/dashboard/viewer.js';", /leaf/],
  ['schemas/x.ts', "import type { Call } from '../src/generated/prisma/client.js';", /leaf/],
  ['src/domain/x.ts', "import fp from 'fastify-plugin';", /plain values/],
  ['src/domain/x.ts', "import type { FastifyRequest } from 'fastify';", /no Fastify/],
  ['src/domain/x.ts', "import type { AccessState } from '@fastify/session';", /no Fastify/],
  ['src/domain/x.ts', "import { findCallById } from '../storage/calls.js';", /as parameters/],
  ['src/domain/x.ts', "import type { Call } from '../generated/prisma/client.js';", /as parameters/],
  ['src/domain/x.ts', "import pg from 'pg';", /call a repository/],
  ['src/domain/x.ts', "import { apiAccessOn } from '../../plugins/access.js';", /as parameters/],
  ['src/domain/x.ts', "import type { Viewer } from '../../plugins/dashboard/viewer.js';", /as parameters/],
  ['src/domain/x.ts', "import Cursor from 'pg-cursor';", /call a repository/],
  ['src/routes/telephony/x.ts', "import { checkAccess } from '../../../plugins/access.js';", /use its decorator/],
  ['src/routes/dashboard/x.ts', "import { sessionOptions } from '../../../plugins/dashboard/session.js';", /decorator/],
  ['src/routes/dashboard/x.ts', "import pg from 'pg';", /call a repository/],
  ['src/routes/dashboard/x.ts', "import type { PrismaClient } from '../../storage/database.js';", /storage|repository/],
  ['src/routes/api/v1/x.ts', "import type { PoolClient } from 'pg-pool';", /call a repository/],
  ['src/routes/x.ts', "import { PrismaClient } from '../generated/prisma/client.js';", /storage|repository/],
  ['src/storage/x.ts', "import type { Config } from '../config.js';", /as parameters/],
  ['src/storage/x.ts', "import { isUuid } from '../domain/ids.js';", /only types from src\/domain/],
  ['src/storage/x.ts', "import { canUseAgent } from '../domain/tenancy-rules.js';", /only types from src\/domain/],
  ['src/storage/x.ts', "import { apiAccessOn } from '../domain/api-access-extra.js';", /only types from src\/domain/],
  ['src/storage/x.ts', "import db from '../../plugins/db.js';", /decorates the storage/],
  ['src/storage/x.ts', "import type { FastifyInstance } from 'fastify';", /plugins\/db.ts decorates/],
  ['src/storage/repositories/x.ts', "import { freePort } from '../../free-port.js';", /as parameters/],
  ['src/calls/x.ts', "import pg from 'pg';", /call a repository/],
  ['src/calls/x.ts', "import type { ConcurrencyLimits } from '../../plugins/concurrency.js';", /composition root/],
  ['src/openapi/x.ts', "import { OPENAPI_PATH } from '../../plugins/openapi.js';", /composition root/],
  ['src/calls/x.ts', "import QueryStream from 'pg-query-stream';", /call a repository/],
  ['src/calls/x.ts', "import type { PrismaClient } from '../storage/database.js';", /storage|repository/],
  ['plugins/x.ts', "import { PrismaPg } from '@prisma/adapter-pg';", /call a repository/],
  ['src/calls/x.ts', "import type { Call } from '../generated/prisma/client.js';", /row types/],
  ['src/routes/dashboard/x.ts', "import type { ActiveUser } from '../../storage/users.js';", /entry point/],
  ['src/routes/dashboard/x.ts', "import { historyAccounts } from '../../storage/index.js';", /request.scoped/],
  ['plugins/x.ts', "import { migrate } from '../src/storage/migrate.js';", /entry point/],
  ['scripts/x.ts', "import { startServer } from '../test/helpers/server-process.js';", /no test code/],
  ['test/browser/x.test.ts', "import { makeShowcase } from '../../scripts/screenshots.js';", /import no script/],
  // One transaction helper for callers (storage.transaction); the pool repositories' own stays inside src/storage.
  [
    'test/webhooks/x.test.ts',
    "import { inTransaction } from '../../src/storage/transaction.js';",
    /storage\.transaction\(fn\)/,
  ],
  [
    'test/scripts/x.test.ts',
    "import { inTransaction } from '../../src/storage/transaction.js';",
    /storage\.transaction/,
  ],
  ['plugins/db.ts', "import { inTransaction } from '../src/storage/transaction.js';", /storage\.transaction/],
  ['src/admin/x.ts', "import { againIfDeadlocked } from '../storage/transaction.js';", /storage\.transaction/],
  ['bench/x.ts', "import { inTransaction } from '../src/storage/transaction.js';", /storage\.transaction/],
  ['scripts/x.ts', "import { inTransaction } from '../src/storage/transaction.js';", /storage\.transaction/],
];

const ALLOWED: [string, string][] = [
  ['schemas/x.ts', "import { Type } from '@sinclair/typebox';\nimport { errorMessage } from './error-codes.js';"],
  ['schemas/dashboard/x.ts', "import { UUID_PATTERN } from '../uuid.js';"],
  ['src/domain/x.ts', "import { CALL_STATUSES } from '../../schemas/vocabulary.js';\nimport { v7 } from 'uuid';"],
  ['src/routes/telephony/x.ts', "import { AppError } from '../../errors.js';"],
  ['src/routes/dashboard/x.ts', "import type { CallDetail } from '../../storage/index.js';"],
  [
    'src/storage/x.ts',
    "import pg from 'pg';\nimport type { Principal } from '../domain/principal.js';\n" +
      "import { ACTIVE_STATUSES } from '../../schemas/vocabulary.js';\nimport { statement } from './statements.js';",
  ],
  ['src/storage/repositories/x.ts', "import { findCallById } from '../calls.js';"],
  ['src/storage/x.ts', "import { inTransaction } from './transaction.js';"],
  ['test/storage/x.test.ts', "import { sqlPool } from '../../src/storage/database.js';"],
  [
    'src/storage/x.ts',
    "import { inScope } from '../domain/tenancy.js';\nimport { MIGRATIONS_DIR } from '../paths.js';",
  ],
  ['src/calls/x.ts', "import type { CallRow, Storage } from '../storage/index.js';"],
  ['src/app.ts', "import db from '../plugins/db.js';"],
  [
    'src/storage/x.ts',
    "import { apiAccessOn, governingPlan } from '../domain/api-access.js';\nimport { inScope } from '../domain/tenancy.js';",
  ],
  ['src/storage/repositories/x.ts', "import { apiAccessOn } from '../../domain/api-access.js';"],
  ['plugins/db.ts', "import pg from 'pg';\nimport { createDatabase } from '../src/storage/database.js';"],
  ['test/scripts/x.test.ts', "import { bundle } from '../../scripts/bundle.js';"],
];

describe('the dependency rules between folders', () => {
  it.each(REFUSED)('%s: refuses %s', async (file, code, advice) => {
    // An import may cross more than one rule (a domain file importing a storage module): each says so.
    expect(await refusals(file, code)).toContainEqual(expect.stringMatching(advice));
  });

  it.each(ALLOWED)('%s: allows %s', async (file, code) => {
    expect(await refusals(file, code)).toEqual([]);
  });
});

describe("the dashboard routes read in the viewer's scope", () => {
  const syntax = new ESLint({
    cwd: path.resolve(import.meta.dirname, '../..'),
    overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
    ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-syntax',
  });
  const lint = async (filePath: string, code: string) =>
    ((await syntax.lintText(`${code}\n`, { filePath }))[0]?.messages ?? []).map((m) => m.message);

  // A handler that reads unscoped: the calls of any account, past the family's guard.
  const UNSCOPED =
    'export const plugin = async (fastify: any) => {\n' +
    "  fastify.get('/calls', async (request: any) => fastify.storage.history.listCallHistory({ accountIds: [request.query.id] }));\n" +
    '};';

  it.each([
    ['src/routes/dashboard/x.ts', UNSCOPED],
    ['src/routes/dashboard/api-webhooks/x.ts', 'export const f = (fastify: any) => fastify.backgroundStorage.keys;'],
    ['src/routes/dashboard/x.ts', 'export const f = ({ storage }: any) => storage.keys;'],
    ['src/routes/dashboard/x.ts', 'export const f = (request: any) => request.server.storage.doNotCall;'],
  ])('%s fails the lint on an unscoped read: %s', async (file, code) => {
    expect(await lint(file, code)).toContainEqual(expect.stringMatching(/request\.scoped/));
  });

  it('passes a read through request.scoped', async () => {
    const code =
      'export const plugin = async (fastify: any) => {\n' +
      "  fastify.get('/calls', async (request: any) => request.scoped.findCallsInScope([request.query.id]));\n" +
      '};';
    expect(await lint('src/routes/dashboard/x.ts', code)).toEqual([]);
  });

  it('leaves other routes alone (the API reads through its own checks)', async () => {
    expect(await lint('src/routes/api/v1/x.ts', 'export const f = (fastify: any) => fastify.storage.keys;')).toEqual(
      [],
    );
  });
});
