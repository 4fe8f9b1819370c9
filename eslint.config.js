// ESLint, type-aware (typescript-eslint's recommendedTypeChecked), over everything tsconfig.json compiles and the plain
// .js entry points; formatting is Prettier's (eslint-config-prettier turns off the rules that would fight it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
  prettier,
);
