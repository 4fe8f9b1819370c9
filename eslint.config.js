// ESLint, type-aware (typescript-eslint's recommendedTypeChecked), over everything tsconfig.json compiles; formatting
// is Prettier's (eslint-config-prettier turns off the rules that would fight it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
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
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.js', 'bin/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  prettier,
);
