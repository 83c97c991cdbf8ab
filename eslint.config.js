// Lint: the recommended sets, plus the few rules that catch real bugs in async network code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';


export default tseslint.config(
  { ignores: ['node_modules/**', 'bench/results/**', 'coverage/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'use a string-literal union or an as-const object' }],
      eqeqeq: ['error', 'smart'],
    },
  },
  // Type-aware rules over src/: a dropped promise or a promise passed as a callback can kill or
  // wedge a daemon. Test files are left out: node:test's test() returns a promise its runner tracks.
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.test-helpers.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
);
