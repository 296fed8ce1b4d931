// ESLint: typescript-eslint's type-aware rules, Temporal's workflow restrictions, and the import
// boundaries that keep the layout's promise (core is pure, workflows are deterministic).
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'node:*',
  'fs',
  'fs/*',
  'path',
  'os',
  'crypto',
  'child_process',
  'http',
  'https',
  'net',
  'tls',
  'url',
  'util',
  'timers',
  'timers/*',
  'stream',
  'events',
  'worker_threads',
  'process',
];

/**
 * Product code never imports the local stack (stack/: throwaway servers for the demo, tests and
 * benchmark). Every src/ rule below carries this group, as a later block's options replace an
 * earlier one's for the same rule.
 */
const noStack = [
  ['../stack/*', '../../stack/*', '../../../stack/*', '../../../../stack/*'],
  'src/ never imports the local stack (stack/): it is for the demo, tests and benchmark only',
];

/**
 * Product code never imports the tests' kit (test/kit: the workflow test environment, the store
 * contract suites, fakes and builders) nor anything else under test/; the unit tests beside the code
 * may. A rule of its own (the typescript-eslint twin of no-restricted-imports), so that the folder
 * blocks below, whose no-restricted-imports options replace one another, need not carry it; the
 * workflow block, which uses this rule for its type-only activity imports, carries it.
 */
const noTest = {
  group: ['../test/*', '../../test/*', '../../../test/*', '../../../../test/*'],
  message: 'src/ never imports test/ outside its tests: the test kit (test/kit) is for the tests only',
};

/** What every file of src/core must not import (src/core/site and src/core/plan, one level down). */
const coreRules = [
  [nodeBuiltins, 'src/core is pure: no Node built-ins'],
  [['@temporalio/*', '@kubernetes/*', 'pg'], 'src/core is pure: no Temporal, Kubernetes or database clients'],
  [['../../*', '!../../core/*'], 'src/core imports nothing of ours outside src/core'],
  noStack,
];

/** `no-restricted-syntax` entries: a variable is read by name only through the settings table. */
const settingsTable = [
  'MemberExpression[object.type="MemberExpression"][object.property.name="env"]',
  'MemberExpression[object.type="Identifier"][object.name="env"]',
  'VariableDeclarator[init.property.name="env"] > ObjectPattern',
  'VariableDeclarator[init.name="env"] > ObjectPattern',
].map((selector) => ({
  selector,
  message: 'read an environment variable through its row of the settings table (src/settings/table.ts: settingFromEnv, variableFromEnv)',
}));

/** A Map, Set, WeakMap or WeakSet made by a declaration not typed ReadonlySet or ReadonlyMap. */
const mutableCollection =
  'VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly(Set|Map)$/]) > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet)$/]';

/**
 * `no-restricted-syntax` entries for modules every workflow of a worker thread shares: no `let` or
 * `var` at module scope, no module-level Map, Set, WeakMap or WeakSet unless typed read-only (a memo of a pure function may
 * stay, its reason beside it in an eslint-disable comment).
 */
const sharedModuleScope = [
  ['Program > VariableDeclaration[kind!="const"]', 'a variable at module scope'],
  ['Program > ExportNamedDeclaration > VariableDeclaration[kind!="const"]', 'a variable at module scope'],
  [`Program > VariableDeclaration > ${mutableCollection}`, 'a collection at module scope'],
  [`Program > ExportNamedDeclaration > VariableDeclaration > ${mutableCollection}`, 'a collection at module scope'],
].map(([selector, what]) => ({
  selector,
  message: `${what} would be shared by every workflow of the worker thread (the bundle preloads this module): keep state inside the workflow`,
}));

/** Import globs for `paths` (folders of src/) from a file one or two levels below src/. */
const bothDepths = (paths) => paths.flatMap((path) => [`../${path}`, `../../${path}`]);

/** `no-restricted-imports` patterns: what a folder must not import (each a list of globs, or `{ regex }`). */
const forbid = (...groups) => ({
  'no-restricted-imports': ['error', { patterns: groups.map(([group, message]) => (Array.isArray(group) ? { group, message } : { ...group, message })) }],
});

export default tseslint.config(
  { ignores: ['node_modules/**', 'test/artifacts/**', 'test/histories/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's suites and tests return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // Test fixtures and YAML-shaped data are typed loosely on purpose; the schemas check them.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/no-redundant-type-constituents': 'off',
    },
  },
  {
    // The whole product: nothing from the local stack (the image does not even hold it).
    files: ['src/**/*.ts'],
    rules: forbid(noStack),
  },
  {
    // The product never imports the tests' kit; a test beside the code may.
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [noTest] }] },
  },
  {
    // One settings table: a variable is read by name only through src/settings/ (its rows, parsers
    // and readers), and in src/temporal/settings.ts, which reads the rows marked envReadElsewhere
    // with Temporal's profile. Elsewhere code passes the environment whole (`env = process.env`)
    // to the table's readers, or is given the values.
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts', 'src/settings/**', 'src/temporal/settings.ts'],
    rules: { 'no-restricted-syntax': ['error', ...settingsTable] },
  },
  {
    // Pure core: no I/O, no Temporal, no Kubernetes client, nothing of ours outside core.
    files: ['src/core/**/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    rules: forbid(...coreRules),
  },
  {
    // The plan side (design → plan → patch) is schema-free: it never imports the site side
    // (documents → design), which may import it.
    files: ['src/core/plan/**/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    rules: forbid(...coreRules, [['../site/*'], 'src/core/plan never imports src/core/site (the site side imports the plan side, not the reverse)']),
  },
  {
    // The fleet side (sites, waves of sites) is workflow code's too, as the plan side is: it imports
    // only the plan side, never the site side's schemas.
    files: ['src/core/fleet/**/*.ts'],
    ignores: ['src/core/**/*.test.ts'],
    rules: forbid(...coreRules, [['../site/*'], 'src/core/fleet imports only src/core/plan and itself: fleet rollouts run in the workflow sandbox']),
  },
  {
    // Workflows: deterministic orchestration. Activities are imported as types only.
    // The benchmark's engine floor is workflow code too.
    files: ['src/workflows/**/*.ts', 'bench/**/workflows.ts'],
    rules: {
      ...forbid(
        [nodeBuiltins, 'workflow code is deterministic: no Node built-ins'],
        [
          ['@kubernetes/*', 'pg', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
          'workflow code runs in the Temporal sandbox: no clients, no worker or activity APIs',
        ],
        [
          ['../kube/*', '../store/*', '../facade/*', '../api/*', '../cli/*'],
          'workflows import only src/contracts, src/core/plan and `import type` of activities',
        ],
        [
          { regex: '^\\.\\./core/(?!plan/|fleet/)' },
          'workflows import only src/core/plan and src/core/fleet from the core: the site side (documents, schemas) stays out of the workflow sandbox',
        ],
        noStack,
      ),
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../activities/*'], allowTypeImports: true, message: 'workflows import activities as types only (proxyActivities<Activities>)' },
            noTest,
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'use sleep() from @temporalio/workflow' },
        { name: 'setInterval', message: 'use sleep() in a loop' },
        { name: 'process', message: 'workflow code has no process' },
        { name: 'fetch', message: 'I/O belongs in an activity' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'not deterministic: use uuid4() from @temporalio/workflow, or pass the value in' },
        { object: 'Date', property: 'now', message: 'not deterministic: use workflowInfo() or pass the time in' },
      ],
    },
  },
  {
    // The contracts every side speaks (messages, workflow IDs, search attributes): below the
    // workflows and the activities, so each imports them and neither imports the other's values.
    // Workflow code imports them too, so they hold only what the sandbox runs.
    files: ['src/contracts/**/*.ts'],
    rules: forbid([
      { regex: '^(?!\\./|\\.\\./core/(plan|fleet)/|@temporalio/(workflow|common)$)' },
      'src/contracts imports only src/contracts, src/core/plan, src/core/fleet and @temporalio/workflow or @temporalio/common',
    ]),
  },
  {
    // What the workflow bundle preloads (src/worker/bundle.ts) is evaluated once per worker thread and
    // shared by every workflow it runs: nothing at module scope may change from one workflow to the next.
    files: ['src/workflows/**/*.ts', 'src/contracts/**/*.ts', 'src/core/plan/**/*.ts', 'src/core/fleet/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', ...settingsTable, ...sharedModuleScope] },
  },
  {
    // The fast workflow tests beside the workflow code: test code run by node:test in Node, never
    // bundled, so the sandbox rules above do not apply. They may use Node built-ins, the SDK's
    // client, worker and testing packages, and the test kit (test/kit/workflows: their environment
    // and fake activities, which start the stack's Temporal CLI); not the stack itself.
    files: ['src/workflows/**/*.test.ts'],
    rules: {
      ...forbid(noStack),
      '@typescript-eslint/no-restricted-imports': 'off',
      'no-restricted-globals': 'off',
      'no-restricted-properties': 'off',
    },
  },
  {
    // Activities and the store never reach for the entry points, nor for the workflows: what both
    // sides share is in src/contracts (the workflows import the activities as types; the reverse
    // would tie the two folders both ways).
    // Their folders go one level down (src/activities/joins, src/store/runs), so each ban is spelled at both depths.
    files: ['src/activities/**/*.ts', 'src/store/**/*.ts', 'src/kube/**/*.ts'],
    rules: forbid(
      [bothDepths(['facade/*', 'api/*', 'cli/*', 'worker.ts', 'worker/*', 'client.ts']), 'I/O layers do not import the entry points, nor the facade'],
      [bothDepths(['workflows/*']), 'I/O layers do not import the workflows, not even their types: shared messages and IDs are in src/contracts'],
      noStack,
    ),
  },
  {
    // The worker runs the activities and workflows; it never imports the facade (the one arrow that
    // would run back up): the run starter that heal and join runs need is the facade's, injected by
    // the entry point (src/worker.ts) through the wiring's ports.
    files: ['src/worker/**/*.ts'],
    rules: forbid(
      [['../facade/*', '../api/*', '../cli/*'], 'src/worker does not import the facade, the API or the CLI: the entry point injects what it needs'],
      noStack,
    ),
  },
  {
    // The facade is shared by CLI and API and depends on neither. Its runs and documents sit one
    // level down (src/facade/runs), so each ban is spelled at both depths.
    files: ['src/facade/**/*.ts'],
    rules: forbid([bothDepths(['api/*', 'cli/*', 'activities/*']), 'the facade depends on neither its callers nor the activities'], noStack),
  },
  {
    // Size, so a newcomer can read a module whole and a function on a screen or two. A file counts
    // every line, blank lines and comments too (as `wc -l` does: its comments are read as well);
    // a function counts neither blank lines nor comments (its size is its logic). Tests are exempt:
    // a table of cases may run long.
    // A declarative table that must stay whole says so where it is, with an eslint-disable naming why.
    files: ['src/**/*.ts', 'stack/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'max-lines': ['error', { max: 350, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
