// Lint: the recommended sets, plus the few rules that catch real bugs in async network code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import prettier from 'eslint-config-prettier/flat';
import * as boundaries from './scripts/import-boundaries.mjs';

// A relative path with / separators, for the decision-file patterns (written for dependency-cruiser).
const relative = (file) => file.slice(import.meta.dirname.length + 1).replaceAll('\\', '/');
const matchesAny = (patterns) => (file) => patterns.some((p) => new RegExp(p).test(relative(file)));
const isTest = (file) => new RegExp(boundaries.TESTS).test(relative(file));

export default tseslint.config(
  { ignores: ['node_modules/**', 'bench/results/**', 'coverage/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Layout is Prettier's (.prettierrc.json): the rules that would argue with it are off.
  prettier,
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
  // Boundaries eslint sees better than dependency-cruiser (.dependency-cruiser.mjs has the import
  // rules; docs/architecture.md "Rules" explains both).
  {
    name: 'kubeward/boundaries/process-env-in-cli-only',
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', '**/*.test.ts', '**/*.test-helpers.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'process.env is read only in src/cli/: pass the values (or the environment) down' },
      ],
    },
  },
  {
    name: 'kubeward/boundaries/decision-node-net-checks-only',
    files: [(file) => matchesAny([...boundaries.DECISION, ...boundaries.PURE_HELPERS])(file) && !isTest(file)],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'node:net',
              allowImportNames: ['isIP', 'isIPv4', 'isIPv6'],
              message: 'decision code takes only the address checks from node:net (no sockets)',
            },
          ],
        },
      ],
    },
  },
);
