// ESLint, type-aware (typescript-eslint's recommendedTypeChecked), over everything the tsconfig.json files compile (the
// root one, bench/'s, the browser scripts') and the plain .js entry points; formatting is Prettier's
// (eslint-config-prettier turns off the rules that would fight it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Who imports whom (docs/architecture.md, "Layers"): each folder's imports are checked here, so a layer cannot be
// crossed by accident. A pattern names the import as written (relative paths included); each message says what to do
// instead. test/lint/layers.test.ts proves every rule fails on a crossing.
const DRIVER = [
  {
    group: ['pg', 'pg-*', '@prisma/*', '**/generated/prisma/**'],
    message:
      'The database driver and its generated types belong to src/storage (and plugins/db.ts): call a repository ' +
      'of fastify.storage and take the row types src/storage/index.ts names (CallRow, Plan, ...).',
  },
  {
    regex: '(^|/)storage/(?!index\\.js$)[^/]+$',
    message: "src/storage's entry point is src/storage/index.ts: import from it (export what is missing there).",
  },
  {
    regex: '.',
    importNames: ['PrismaClient'],
    message:
      'PrismaClient belongs to src/storage (and plugins/db.ts): take the storage functions or decorators instead.',
  },
];
const FRAMEWORK = {
  group: ['fastify', 'fastify-plugin', '@fastify/*'],
  message: 'src/domain is plain TypeScript: no Fastify. Take plain values and let the route or plugin do the HTTP.',
};
const SCHEMAS = {
  group: ['**/src/**', '**/plugins/**'],
  message:
    'schemas/ are leaves (TypeBox, and the leaf modules beside them: error-codes, vocabulary, uuid): move what both ' +
    'need into a leaf under schemas/, or the code that needs src/ into src/ (as src/calls/call-view.ts).',
};
const DOMAIN = {
  group: ['**/storage/**', '**/plugins/**', '**/generated/prisma/**'],
  message:
    'src/domain imports no storage, plugin or database type: take the values as parameters; src/calls, src/admin ' +
    'or a plugin reads and writes them.',
};
const SERVICES = {
  group: ['**/plugins/**'],
  message:
    'src/ is what plugins wire, not the reverse: only src/app.ts (the composition root) registers plugins. Move what ' +
    'both need into src/ and let the plugin import it.',
};
const ROUTES = {
  group: ['**/plugins/**'],
  message:
    "Routes use the decorators plugins set (fastify.x, request.x, reply.x) and their types, never a plugin's module: " +
    'register the plugin in src/app.ts (or its folder index under plugins/) and use its decorator.',
};
const DASHBOARD_READS = {
  // Its other modules are refused to every route already (DRIVER: the entry point only).
  regex: '(^|/)storage/index\\.js$',
  allowTypeImports: true,
  message:
    "Dashboard routes read through request.scoped (the viewer's scope bound) and change state through " +
    'request.admin: take only types from src/storage.',
};
/** Dashboard routes hold no unscoped repository: a read that forgot `request.scope` fails the lint. */
const NO_DASHBOARD_STORAGE = [
  'MemberExpression[property.name=/^(storage|backgroundStorage)$/]',
  'ObjectPattern > Property[key.name=/^(storage|backgroundStorage)$/]',
].map((selector) => ({
  selector,
  message:
    "Dashboard routes read through request.scoped (in the viewer's scope) and change state through request.admin " +
    '(src/admin, with the actor): never fastify.storage or backgroundStorage.',
}));
/** src/storage's imports, for a file `depth` folders below src/storage: its own modules, src/domain's types, the
 * generated client, schemas/ leaves and libraries. */
const storage = (depth) => {
  const src = `^(\\.\\./){${depth + 1}}`;
  const root = `^(\\.\\./){${depth + 2}}`;
  return [
    {
      regex: `${src}(?!\\.\\./|domain/|generated/|storage/|paths\\.js$)`,
      message:
        'src/storage imports only its own modules, src/domain types, the tenancy and API-access rules, src/paths.ts, ' +
        'schemas/ leaves and its driver: take config values and ports as parameters.',
    },
    {
      regex: `${src}domain/(?!(tenancy|api-access)\\.js$)`,
      allowTypeImports: true,
      message:
        'src/storage takes only types from src/domain (import type): the logic stays with the callers. The ' +
        'exceptions are the tenancy rule (src/domain/tenancy.ts), which the scoped reads apply, and the API-access ' +
        'rule (src/domain/api-access.ts), which the key lookup applies.',
    },
    {
      regex: `${root}(?!\\.\\./|schemas/)`,
      message: 'src/storage imports no plugin, test or script: plugins/db.ts decorates the storage, not the reverse.',
    },
    { ...FRAMEWORK, message: 'src/storage imports no Fastify: plugins/db.ts decorates the storage for the routes.' },
  ];
};
// scripts/ and test/ stay apart: a script that reused a test helper (or a test that imported a script) made each
// depend on the other's internals; what both need lives in src/, or the script runs the tests.
const TEST_CODE = {
  group: ['**/test/**'],
  message: 'scripts/ import no test code: put what both need in src/, or run the test file (vitest run <file>).',
};
const SCRIPT_CODE = {
  group: ['**/scripts/**'],
  message:
    'Tests import no script (only test/scripts/ tests its own subject): take the code from src/ or a test helper.',
};
// One transaction helper for callers: storage.transaction(fn) (Prisma's). src/storage/transaction.ts is the pool
// repositories' own (inTransaction, on one pooled connection, for their named prepared statements, which Prisma 7's
// interactive transaction cannot run): a caller that took it would start a second, untyped way to write.
const TRANSACTION = {
  regex: '(^|/)storage/transaction(\\.[jt]s)?$',
  message:
    "src/storage/transaction.ts is the pool repositories' own helper: compose a caller's transaction with " +
    'storage.transaction(fn), or call the pool repository method that holds its own (calls.transition); a test ' +
    'writes its setup through test/helpers/seed.ts.',
};
const restrict = (...patterns) => ({ '@typescript-eslint/no-restricted-imports': ['error', { patterns }] });
/**
 * The same, outside src/storage: nothing there imports the pool repositories' transaction helper.
 * @param {...object} patterns
 */
const outside = (...patterns) => restrict(...patterns, TRANSACTION);

/** The dependency rules, one config object per layer (the last one matching a file wins). */
export const layers = [
  // Every file outside src/storage (those no later object names: plugins/db.ts, bench/, test/scripts/).
  { files: ['**/*.ts', 'scripts/**/*.js'], ignores: ['src/storage/**'], rules: outside() },
  {
    files: ['src/**/*.ts', 'plugins/**/*.ts'],
    ignores: ['src/storage/**', 'plugins/db.ts'],
    rules: outside(...DRIVER),
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/app.ts', 'src/storage/**'],
    rules: { ...outside(SERVICES, ...DRIVER) },
  },
  { files: ['schemas/**/*.ts'], rules: outside(SCHEMAS, ...DRIVER) },
  { files: ['src/domain/**/*.ts'], rules: outside(FRAMEWORK, DOMAIN, ...DRIVER) },
  { files: ['src/routes/**/*.ts'], rules: outside(ROUTES, ...DRIVER) },
  { files: ['scripts/**/*.ts', 'scripts/**/*.js'], rules: outside(TEST_CODE) },
  { files: ['test/**/*.ts'], ignores: ['test/scripts/**'], rules: outside(SCRIPT_CODE) },
  {
    files: ['src/routes/dashboard/**/*.ts'],
    rules: {
      ...outside(ROUTES, DASHBOARD_READS, ...DRIVER),
      'no-restricted-syntax': ['error', ...NO_DASHBOARD_STORAGE],
    },
  },
  ...[0, 1, 2, 3].map((depth) => ({
    files: [`src/storage/${'*/'.repeat(depth)}*.ts`],
    rules: restrict(...storage(depth)),
  })),
];

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'src/generated/',
      '.data/',
      'coverage/',
      'bench/.tmp/',
      '.bench-scratch/',
      'openapi/',
      // The n8n community node package: its own lint (n8n's community-node rules, ESLint 9) over its own install.
      'integrations/n8n/',
      // The TypeScript client's build and its generated types (openapi-typescript's output, checked against the
      // OpenAPI document by test/clients/typescript-client-types.test.ts).
      'clients/typescript/dist/',
      'clients/typescript/src/schema.ts',
      // Written by the README snippet test while it runs (git-ignored).
      'test/readme/.generated-*',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.js', 'bin/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Fastify's plugins, hooks and handlers are async functions by contract (an async plugin needs no `done`), with
      // or without an await in them.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The dashboard's script, served to browsers as it is (its types: src/views/assets/tsconfig.json).
    files: ['src/views/assets/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'script' },
  },
  ...layers,
  {
    // Small files with one purpose (docs/architecture.md): every line counts, blank and comment lines too, as `wc -l`
    // counts them. test/lint/max-lines.test.ts proves it fails a file one line over.
    files: ['src/**/*.{ts,js}', 'plugins/**/*.{ts,js}', 'schemas/**/*.{ts,js}'],
    ignores: ['src/generated/**'],
    rules: { 'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }] },
  },
  prettier,
);
