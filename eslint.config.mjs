// Flat ESLint config: typescript-eslint's type-checked rules (they read the TypeScript program) for src/, test/,
// bench/ and tools/. The project service reads each file's nearest tsconfig.json: bench/ and tools/ have their own.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'tools/**/target/**',
      '.data/**',
      '.bench-build/**',
      '.tools-build/**',
      '.venv-fuzz/**',
      '.venv-sdk/**',
      // The SDKs: generated code, built and tested by their own gates (docs/api/generated-clients.md).
      'clients/**',
      'artifacts/**',
      '*.mjs',
      '*.js',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // A promise nobody awaits loses its errors (and, in a request, outlives it).
      '@typescript-eslint/no-floating-promises': 'error',
      // Prettier wraps code at 110 but leaves comments; long strings, URLs and patterns may stay whole.
      'max-len': [
        'error',
        {
          code: 110,
          ignoreUrls: true,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
        },
      ],
    },
  },
  // src/common/ is what every feature builds on, so it imports no feature module (only src/config/):
  // docs/architecture.md "Modules and boundaries". One block per depth, since `../` means a different folder.
  ...[
    ['src/common/*.ts', '\\.\\./'],
    ['src/common/*/*.ts', '\\.\\./\\.\\./'],
    ['src/common/*/*/*.ts', '\\.\\./\\.\\./\\.\\./'],
  ].map(([files, up]) => ({
    files: [files],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^${up}(?!config/)`,
              message: 'src/common/ imports no feature module: move the shared piece into src/common/.',
            },
          ],
        },
      ],
    },
  })),
  {
    // Tests read HTTP responses, whose bodies are untyped JSON by nature (`res.body.data.id`); the
    // assertions are the type check there. Everything else stays on.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
